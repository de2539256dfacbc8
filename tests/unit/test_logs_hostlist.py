import pytest

from planner.logs.hostlist import expand


@pytest.mark.parametrize("text,hosts", [
    ("nid[0001-0004,0010],gpu07", ["nid0001", "nid0002", "nid0003", "nid0004", "nid0010", "gpu07"]),
    ("gpu07", ["gpu07"]),
    ("a[8-11]", ["a8", "a9", "a10", "a11"]),
    ("n[098-101]", ["n098", "n099", "n100", "n101"]),
    ("r[1-2]n[01-02]", ["r1n01", "r1n02", "r2n01", "r2n02"]),
    ("c[1,3],d[5]", ["c1", "c3", "d5"]),
    ("x[1-2]-ib", ["x1-ib", "x2-ib"]),
    (" h1,h2 ", ["h1", "h2"]),
])
def test_expand(text, hosts):
    assert expand(text) == hosts


@pytest.mark.parametrize("bad", ["", "nid[0001-", "nid0001]", "n[a-b]", "n[5-3]", "a,,b", "n[1-2",
                                 "n[[1]]", "n[1-2-3]", "a b"])
def test_expand_rejects(bad):
    with pytest.raises(ValueError):
        expand(bad)


@pytest.mark.parametrize("text,n", [("nid[0001-0004,0010],gpu07", 6), ("r[1-2]n[01-02]", 4),
                                    ("a[1-100]b[1-100]c[1-100]d[1-100]", 100_000_000),
                                    ("n[0-99999999999999999999]", 10**20)])
def test_count_without_expanding(text, n):
    from planner.logs.hostlist import count
    assert count(text) == n


def test_expand_refuses_over_cap_before_building():
    with pytest.raises(ValueError, match="100,000,000 hosts"):
        expand("a[1-100]b[1-100]c[1-100]d[1-100]")
    with pytest.raises(ValueError, match="more than 3"):
        expand("n[1-4]", max_hosts=3)
    assert expand("n[1-3]", max_hosts=3) == ["n1", "n2", "n3"]
