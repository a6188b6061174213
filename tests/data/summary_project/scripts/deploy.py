from ape import accounts, project
from ape.contracts import ContractContainer
from ethpm_types import Bytecode


def main():
    deployer = accounts.test_accounts[0]
    good = deployer.deploy(project.Good, 7)
    print("DEPLOYED Good", good.address)
    # The same type with one constant changed in its code: no source compiles to it.
    kind = project.Good.contract_type
    code = kind.deployment_bytecode.bytecode.replace("11" * 32, "22" * 32)
    altered = kind.model_copy(update={"deployment_bytecode": Bytecode(bytecode=code)})
    bad = deployer.deploy(ContractContainer(altered), 8)
    print("DEPLOYED Altered", bad.address)
