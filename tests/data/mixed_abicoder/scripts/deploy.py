from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    registry = deployer.deploy(project.Registry, "mixed")
    plain = deployer.deploy(project.Plain)
    print("DEPLOYED Registry", registry.address)
    print("DEPLOYED Plain", plain.address)
