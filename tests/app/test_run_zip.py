"""The Download zip is built once per key and the least recently used keys forgotten."""

from explorer import run_zip


def test_a_zip_is_built_once_per_key_and_old_keys_are_forgotten(monkeypatch):
    monkeypatch.setattr(run_zip, "_kept", type(run_zip._kept)())
    monkeypatch.setattr(run_zip, "_MAX_KEPT", 2)
    built = []

    def build(name):
        def make():
            built.append(name)
            return name.encode()

        return make

    assert run_zip.cached_zip("a", build("a")) == b"a"
    assert run_zip.cached_zip("a", build("a")) == b"a"
    assert built == ["a"]
    run_zip.cached_zip("b", build("b"))
    run_zip.cached_zip("a", build("a"))  # a used last: b is the oldest now
    run_zip.cached_zip("c", build("c"))
    assert list(run_zip._kept) == ["a", "c"]
    run_zip.cached_zip("b", build("b"))
    assert built == ["a", "b", "c", "b"]
