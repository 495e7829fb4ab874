import pytest

from mountbench.clients.spec import FIO_PORT, ClientSpec, parse_client, parse_clients, parse_counts
from mountbench.errors import UsageError


def test_host_alone_uses_fios_default_port():
    client = parse_client("10.0.0.2")
    assert client == ClientSpec("10.0.0.2", FIO_PORT)
    assert client.label == "10.0.0.2"
    assert client.fio_arg == "10.0.0.2,8765"
    assert client.agent_port == 8766


def test_host_and_port():
    client = parse_client("node1:9000")
    assert (client.host, client.port, client.label, client.fio_arg) == ("node1", 9000, "node1:9000", "node1,9000")
    assert client.dirname == "node1_9000"


def test_ipv6_in_brackets():
    client = parse_client("[fd00::2]:9000")
    assert client.host == "fd00::2"
    assert client.fio_arg == "ip6:fd00::2,9000"
    assert client.label == "[fd00::2]:9000"
    assert ":" not in client.dirname
    assert parse_client("[fd00::2]").port == FIO_PORT


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "needs a host"),
        ("fd00::2", "in brackets"),
        ("host:http", "port must be a number"),
        ("host:0", "port must be a number"),
        ("host:70000", "port must be a number"),
        ("a,b", "not a host name"),
        ("[fd00::2", "IPv6"),
    ],
)
def test_bad_client_is_a_one_line_usage_error(text, says):
    with pytest.raises(UsageError, match=says) as info:
        parse_client(text)
    assert "\n" not in str(info.value)


def test_a_client_given_twice_is_refused():
    with pytest.raises(UsageError, match="given twice"):
        parse_clients(["10.0.0.2", "10.0.0.2:8765"])


def test_entries_match_by_host_and_port():
    client = ClientSpec("10.0.0.2", 9000)
    assert client.is_entry_of("10.0.0.2", 9000)
    assert not client.is_entry_of("10.0.0.2", 8765)
    assert ClientSpec("fd00::2").is_entry_of("ip6:fd00::2", 8765)


def test_counts_are_sorted_unique_and_within_the_clients_given():
    assert parse_counts("4,1,2,2", 4) == (1, 2, 4)
    assert parse_counts(None, 3) == ()
    with pytest.raises(UsageError, match="only 2 given"):
        parse_counts("1,3", 2)
    with pytest.raises(UsageError, match="counts such as"):
        parse_counts("1,x", 2)
    with pytest.raises(UsageError, match="--client HOST"):
        parse_counts("1,2", 0)


def test_roundtrip_through_a_dict():
    client = ClientSpec("node1", 9000)
    assert ClientSpec.from_dict(client.to_dict()) == client


def test_remote_views_name_a_path_and_a_client():
    from mountbench.clients.remoteprobe import RemoteView, parse_view

    a, b = parse_view("/mnt/nfs@10.0.0.2=/mnt/nfs@node3:9000")
    assert a == RemoteView(ClientSpec("10.0.0.2"), "/mnt/nfs")
    assert b == RemoteView(ClientSpec("node3", 9000), "/mnt/nfs")
    assert b.label == "/mnt/nfs@node3:9000"
    assert parse_view("/srv/share=/mnt/share") is None  # a local pair
    assert parse_view("/srv/a@b/c=/mnt/x") is None  # an @ inside a local path
    with pytest.raises(UsageError, match="both views through clients"):
        parse_view("/mnt/nfs@10.0.0.2=/mnt/local")
    with pytest.raises(UsageError, match="must be absolute"):
        parse_view("share@10.0.0.2=/mnt/nfs@10.0.0.3")
