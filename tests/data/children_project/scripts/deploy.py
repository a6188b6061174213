from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    with_helper = deployer.deploy(project.WithHelper)
    root = deployer.deploy(project.Root)
    root.grow(sender=deployer)
    store = deployer.deploy(project.DataStore)
    store.write(b"issue 28: bytes kept as code", sender=deployer)
    seeds = deployer.deploy(project.Seeds)
    seeds.plant(b"issue 28".ljust(32, b"\0"), sender=deployer)
    branch = project.Branch.at(root.branch())
    middle = project.Middle.at(branch.middle())
    made = {
        "WithHelper": with_helper.address,
        "Helper": with_helper.helper(),
        "Root": root.address,
        "Branch": branch.address,
        "Middle": middle.address,
        "Leaf": middle.leaf(),
        "DataStore": store.address,
        "Data": store.pointer(),
        "Seeds": seeds.address,
        "Sprout": seeds.sprout(),
    }
    for name, address in made.items():
        print("DEPLOYED", name, address)
