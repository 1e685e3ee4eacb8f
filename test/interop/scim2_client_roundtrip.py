"""A round trip of python's scim2-client against one Roster connection: discovery, then create, read, replace,
patch and delete of a user and a group. Usage: scim2_client_roundtrip.py BASE_URL SECRET. Prints one line per step
and exits non-zero at the first failure."""

import sys

from httpx import Client
from scim2_client.engines.httpx import SyncSCIMClient
from scim2_models import PatchOp, PatchOperation


def main(base_url: str, secret: str) -> None:
    client = Client(base_url=base_url, headers={"Authorization": f"Bearer {secret}"})
    scim = SyncSCIMClient(client)
    scim.discover()
    print("discovered", sorted(scim.resource_models and [m.__name__ for m in scim.resource_models]))
    User = scim.get_resource_model("User")
    Group = scim.get_resource_model("Group")

    user = scim.create(User(user_name="py.roundtrip@example.com", display_name="Py Roundtrip", active=True))
    print("created user", user.id)
    got = scim.query(User, user.id)
    assert got.user_name == "py.roundtrip@example.com", got.user_name
    got.display_name = "Py Replaced"
    replaced = scim.replace(got)
    assert replaced.display_name == "Py Replaced", replaced.display_name
    print("replaced user")
    patch = PatchOp[User](operations=[PatchOperation(op="replace", path="displayName", value="Py Patched")])
    scim.modify(User, user.id, patch)
    assert scim.query(User, user.id).display_name == "Py Patched"
    print("patched user")

    group = scim.create(Group(display_name="Py Group"))
    print("created group", group.id)
    got_group = scim.query(Group, group.id)
    assert got_group.display_name == "Py Group"
    got_group.display_name = "Py Group Replaced"
    assert scim.replace(got_group).display_name == "Py Group Replaced"
    patch_group = PatchOp[Group](
        operations=[PatchOperation(op="add", path="members", value=[{"value": user.id}])]
    )
    scim.modify(Group, group.id, patch_group)
    members = scim.query(Group, group.id).members or []
    assert [m.value for m in members] == [user.id], members
    print("patched group")

    scim.delete(Group, group.id)
    scim.delete(User, user.id)
    print("deleted both")
    print("scim2-client round trip: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
