from ape import accounts, project


def main():
    owner = accounts.test_accounts[0]
    # From a dependency: its verification starts beside the script at once.
    counter = project.dependencies["lib"]["local"].Counter.deploy(sender=owner)
    for _ in range(3):
        counter.inc(sender=owner)
    # The first use of the npm dependency: Ape installs it and compiles Token now.
    token = project.Token.deploy(10**24, sender=owner)
    print("Counter", counter.address)
    print("Token", token.address)
