"""ctx.random: the raw stream against Philox4x32-10 written out here in NumPy (Random123's known
answers first), each distribution against its formula, streams continued and restarted, statistics
of large samples, and the refusals."""
import math

import numpy as np
import pytest

import clrun

M0, M1, W0, W1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57), np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)


def philox(ctr, key):
    """Philox4x32-10 over arrays: ctr (n, 4) and key (n, 2) of uint32."""
    c = [ctr[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = key[:, 0].astype(np.uint32), key[:, 1].astype(np.uint32)
    for r in range(10):
        if r:
            k0, k1 = k0 + W0, k1 + W1
        p0, p1 = M0 * c[0], M1 * c[2]
        hi0, lo0, hi1, lo1 = p0 >> np.uint64(32), p0 & np.uint64(0xFFFFFFFF), p1 >> np.uint64(32), p1 & np.uint64(0xFFFFFFFF)
        c = [hi1 ^ c[1] ^ k0.astype(np.uint64), lo1, hi0 ^ c[3] ^ k1.astype(np.uint64), lo0]
    return np.stack([x.astype(np.uint32) for x in c], axis=1)


def words(seed, sub, first, n):
    j = np.arange(first, first + n, dtype=np.uint64)
    q = j // np.uint64(4)
    ctr = np.stack([q & np.uint64(0xFFFFFFFF), q >> np.uint64(32), np.full_like(q, sub & 0xFFFFFFFF), np.full_like(q, sub >> 32)], 1)
    key = np.tile(np.array([seed & 0xFFFFFFFF, seed >> 32], np.uint64), (len(j), 1))
    return philox(ctr.astype(np.uint32), key.astype(np.uint32))[np.arange(len(j)), (j % np.uint64(4)).astype(np.int64)]


def test_the_reference_gives_random123s_known_answers():
    ctr = np.array([[0, 0, 0, 0], [0xFFFFFFFF] * 4, [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344]], np.uint32)
    key = np.array([[0, 0], [0xFFFFFFFF] * 2, [0xA4093822, 0x299F31D0]], np.uint32)
    want = np.array([[0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8], [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD],
                     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]], np.uint32)
    assert np.array_equal(philox(ctr, key), want)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 97, 4099])
def test_raw_words_match_philox_at_any_offset(ctx, rng, n):
    seed, sub, off = int(rng.integers(0, 2**64, dtype=np.uint64)), int(rng.integers(0, 2**40)), int(rng.integers(0, 10**6))
    r = ctx.random(seed, subsequence=sub, offset=off)
    got = r.bits(n).get()
    assert np.array_equal(got, words(seed, sub, off, n))
    assert r.offset == off + -(-n // 4) * 4


def test_distributions_follow_their_formulas(ctx, rng):
    seed = int(rng.integers(0, 2**63))
    n = 5001
    w = words(seed, 0, 0, 4 * n)
    u = ctx.random(seed).random(n).get()
    assert np.array_equal(u, (w[:n] >> 8).astype(np.float32) * np.float32(2.0**-24))
    x = ctx.random(seed).uniform(-3, 5, (n,)).get()
    want = ((w[:n] >> 8).astype(np.float64) * 2.0**-24 * 8 - 3).astype(np.float32)  # exact: one rounding of an exact value
    assert np.array_equal(x, want)
    h = ctx.random(seed).random(n, np.float16).get()
    assert np.array_equal(h, (w[:n] >> 21).astype(np.float16) * np.float16(2.0**-11)) and h.max() < 1
    b = ctx.random(seed).random(n, "bfloat16")
    assert b.bf16 and np.array_equal(b.get(), ((w[:n] >> 24).astype(np.float32) * np.float32(2.0**-8)).view(np.uint32) >> 16)
    d = ctx.random(seed).random(n, np.float64).get()
    w2 = w[:2 * n].reshape(n, 2).astype(np.float64)
    assert np.array_equal(d, (np.floor(w2[:, 0] / 32) * 67108864.0 + np.floor(w2[:, 1] / 64)) * 2.0**-53)
    i = ctx.random(seed).integers(-7, 13, n).get()
    w64 = (w[:2 * n:2].astype(object) << 32) | w[1:2 * n:2].astype(object)
    assert i.dtype == np.int64 and np.array_equal(i, np.array([-7 + (v * 20 >> 64) for v in w64], np.int64))
    m = ctx.random(seed).bernoulli(0.25, n).get()
    assert m.dtype == np.bool_ and np.array_equal(m, w[:n].astype(np.uint64) < np.uint64(2**30))
    z = ctx.random(seed).normal(2.0, 3.0, n).get()
    uu = (w[:n:2].astype(np.float32) * np.float32(2.0**-32) + np.float32(2.0**-33)).astype(np.float64)
    vv = (w[1:n + 1:2].astype(np.float32) * np.float32(2.0**-32 * 2 * math.pi) + np.float32(2.0**-32 * math.pi)).astype(np.float64)
    r = np.sqrt(-2 * np.log(uu))
    ref = np.empty(n)
    ref[0::2], ref[1::2] = (r * np.sin(vv))[:len(ref[0::2])], (r * np.cos(vv))[:len(ref[1::2])]
    assert np.allclose(z, 2 + 3 * ref, rtol=1e-4, atol=1e-4)


def test_streams_continue_and_restart(ctx, rng):
    seed = int(rng.integers(0, 2**32))
    r = ctx.random(seed)
    a, b = r.random(10), r.random((3, 7))
    whole = ctx.random(seed).random(10 + 12 + 21)  # 10 takes 12 words (groups of four)
    assert np.array_equal(a.get(), whole.get()[:10]) and np.array_equal(b.get().ravel(), whole.get()[12:33])
    r.offset = 0
    assert np.array_equal(r.random(10).get(), a.get())
    assert not np.array_equal(ctx.random(seed, subsequence=1).bits(64).get(), ctx.random(seed).bits(64).get())
    assert ctx.random(seed).random().shape == ()


def test_wide_integer_ranges(ctx, rng):
    seed = int(rng.integers(0, 2**32))
    n = 999
    w = words(seed, 0, 0, 2 * n + 4)
    w64 = [(int(w[2 * k]) << 32) | int(w[2 * k + 1]) for k in range(n)]
    full = ctx.random(seed).integers(0, 2**64, n, dtype=np.uint64).get()
    assert np.array_equal(full, np.array(w64, np.uint64))
    top = ctx.random(seed).integers(2**63, 2**64 - 5, n, dtype=np.uint64).get()
    assert np.array_equal(top, np.array([2**63 + (v * (2**63 - 5) >> 64) for v in w64], np.uint64))
    s64 = ctx.random(seed).integers(-2**63, 2**63, n, dtype=np.int64).get()
    assert np.array_equal(s64, (np.array(w64, np.uint64) ^ np.uint64(1 << 63)).view(np.int64))  # -2^63 + w, wrapped
    i32 = ctx.random(seed).integers(-2**31, 2**31, n, dtype=np.int32).get()
    assert i32.min() >= -2**31 and i32.dtype == np.int32


def test_statistics(ctx, rng):
    n = 1 << 20
    r = ctx.random(int(rng.integers(0, 2**63)))
    u = r.random(n, np.float64).get()
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n) and abs(u.var() - 1 / 12) < 2e-3
    counts = np.bincount(r.integers(0, 10, n).get(), minlength=10)
    chi = ((counts - n / 10) ** 2 / (n / 10)).sum()
    assert chi < 33  # 9 degrees of freedom, p ~ 1e-4
    z = np.sort(r.standard_normal(n).get().astype(np.float64))
    cdf = 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    ks = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert ks * math.sqrt(n) < 1.95
    assert abs(z.mean()) < 5 / math.sqrt(n) and abs(z.std() - 1) < 0.005
    p = r.bernoulli(0.1, n).get().mean()
    assert abs(p - 0.1) < 5 * math.sqrt(0.09 / n)


def test_refusals(ctx):
    r = ctx.random(1)
    for bad in (-1, 2**64, 1.5, "1", True):
        with pytest.raises(clrun.InvalidArgument):
            ctx.random(bad)
    with pytest.raises(ValueError):
        r.uniform(2, 1, 4)
    with pytest.raises(ValueError):
        r.normal(0, -1, 4)
    with pytest.raises(ValueError):
        r.integers(5, 5, 4)
    with pytest.raises(ValueError):
        r.integers(0, 2**40, 4, dtype=np.int32)
    with pytest.raises(ValueError):
        r.bernoulli(1.5, 4)
    with pytest.raises(clrun.Unsupported):
        r.random(4, np.int32)
    with pytest.raises(clrun.Unsupported):
        r.integers(0, 4, 4, dtype=np.int8)
    with pytest.raises(ValueError):
        r.random((-1, 2))
    assert r.offset == 0  # nothing drawn by a refusal


def test_nan_inf_and_a_closed_context(ctx):
    r = ctx.random(3)
    for lo, hi in ((float("nan"), 1.0), (0.0, float("inf")), (float("-inf"), 0.0)):
        with pytest.raises(ValueError):
            r.uniform(lo, hi, 4)
    with pytest.raises(ValueError):
        r.normal(float("nan"), 1.0, 4)
    with pytest.raises(ValueError):
        r.bernoulli(float("nan"), 4)
    assert r.offset == 0
    with clrun.open() as c2:
        r2 = c2.random(3)
        a = r2.random(8)
    with pytest.raises(clrun.InvalidArgument):
        r2.random(4)
    with pytest.raises(clrun.InvalidArgument):
        a.cumsum()


def test_two_threads_draw_their_own_streams(ctx, rng):
    import threading
    seeds = [int(s) for s in rng.integers(0, 2**63, 4)]
    want = {s: words(s, 0, 0, 4096) for s in seeds}
    errors = []

    def work(s):
        try:
            r = ctx.random(s)
            for _ in range(4):
                got = np.concatenate([r.bits(1024).get() for _ in range(4)])
                assert np.array_equal(got, want[s])
                r.offset = 0
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=work, args=(s,)) for s in seeds]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
