from ape import accounts, project


def main():
    owner = accounts.test_accounts[0]
    token = owner.deploy(project.Token, "Vyper Two", "VY2", 18, 10**24)
    factory = owner.deploy(project.Factory, token.address)
    factory.make(sender=owner)
    factory.make(sender=owner)
    made = [("Token", token.address), ("Factory", factory.address)]
    made += [(f"Forwarder {i + 1}", factory.made(i)) for i in range(2)]
    for name, address in made:
        print(f"{name:20} {address}")
