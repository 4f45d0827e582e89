"""The example's own tests: every op against eager PyTorch. Plain unittest, so they run in any environment that
has torch and the installed wheel: `python -m unittest discover -s tests -v` (pytest collects them too).

STABLE_OPS_TEST_DEVICE=cuda runs every test with CUDA as the default device (torch.set_default_device): the same
tests, every tensor on the GPU. StableOpsCudaTest runs where CUDA is available: each op on the GPU against the
same op on the CPU, and the CUDA kernel on the current stream."""

import os
import unittest

import torch

import stable_ops

DEVICE = os.environ.get("STABLE_OPS_TEST_DEVICE")


def setUpModule():
    if DEVICE:
        torch.set_default_device(DEVICE)


def tearDownModule():
    if DEVICE:
        torch.set_default_device(None)

ACTS = {None: lambda y: y, "silu": torch.nn.functional.silu, "relu": torch.relu, "sigmoid": torch.sigmoid,
        "tanh": torch.tanh}


class StableOpsTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def test_rms_norm_act(self):
        for dtype in (torch.float32, torch.float64, torch.bfloat16):
            for act, ref_act in ACTS.items():
                x = torch.randn(3, 5, 16, dtype=dtype)
                w = torch.randn(16, dtype=dtype)
                got = stable_ops.rms_norm_act(x, w, 1e-5, act)
                xf = x.float()
                ref = ref_act(xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()).to(dtype)
                self.assertEqual(got.dtype, dtype)
                self.assertEqual(got.shape, x.shape)
                torch.testing.assert_close(got, ref, rtol=1e-5 if dtype != torch.bfloat16 else 1.6e-2, atol=1e-5)

    def test_rms_norm_act_errors(self):
        with self.assertRaises(RuntimeError):
            stable_ops.rms_norm_act(torch.randn(2, 4), torch.randn(5))
        with self.assertRaises(RuntimeError):
            torch.ops.stable_ops.rms_norm_act(torch.randn(2, 4), torch.randn(4), 1e-6, 9)

    def test_masked_softmax(self):
        x = torch.randn(4, 6, 8)
        mask = torch.rand(4, 6, 8) > 0.4
        mask[1, 2] = False  # a row with nothing kept: zeros
        for dim in (-1, 1):
            got = stable_ops.masked_softmax(x, mask, dim)
            ref = torch.softmax(x.masked_fill(~mask, float("-inf")), dim)
            ref = torch.where(~mask.any(dim, keepdim=True), torch.zeros_like(ref), ref)
            self.assertTrue(torch.equal(got, ref))
        self.assertTrue(torch.equal(stable_ops.masked_softmax(x, mask)[1, 2], torch.zeros(8)))

    def test_quantize_dequantize_int8(self):
        x = torch.randn(7, 33) * 5
        x[3] = 0  # an all-zero row: the scale's floor keeps it finite
        q, scale = stable_ops.quantize_int8(x)
        ref_scale = x.abs().amax(-1, keepdim=True).clamp_min(1e-8) / 127.0
        ref_q = torch.clamp(torch.round(x / ref_scale), -127, 127).to(torch.int8)
        self.assertEqual(q.dtype, torch.int8)
        self.assertTrue(torch.equal(q, ref_q))
        self.assertTrue(torch.equal(scale, ref_scale))
        deq = stable_ops.dequantize_int8(q, scale)
        self.assertTrue(torch.equal(deq, q.float() * scale))
        self.assertLessEqual((deq - x).abs().max().item(), scale.max().item() / 2 + 1e-6)

    def test_requantize_int8(self):
        acc = torch.randint(-(2**20), 2**20, (5, 9), dtype=torch.int32)
        acc[0, 0], acc[0, 1] = 2**31 - 1, -(2**31)  # the product needs 64 bits; saturates
        for multiplier, shift in ((1, 0), (3, 5), (1234567, 31), (-7, 2)):
            got = stable_ops.requantize_int8(acc, multiplier, shift)
            ref = torch.clamp((acc.to(torch.int64) * multiplier) >> shift, -128, 127).to(torch.int8)
            self.assertTrue(torch.equal(got, ref), (multiplier, shift))
        with self.assertRaises(RuntimeError):
            stable_ops.requantize_int8(acc.float(), 1, 0)

    def test_linear_act(self):
        x, w, b = torch.randn(4, 8), torch.randn(3, 8), torch.randn(3)
        for act, ref_act in ACTS.items():
            self.assertTrue(torch.equal(stable_ops.linear_act(x, w, b, act), ref_act(torch.nn.functional.linear(x, w, b))))
        self.assertTrue(torch.equal(stable_ops.linear_act(x, w), torch.nn.functional.linear(x, w)))


@unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
class StableOpsCudaTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def test_rms_norm_act_cuda_kernel(self):
        for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
            x = torch.randn(37, 300, dtype=dtype, device="cpu")
            w = torch.randn(300, dtype=dtype, device="cpu")
            for act in ACTS:
                want = stable_ops.rms_norm_act(x, w, 1e-5, act)
                got = stable_ops.rms_norm_act(x.cuda(), w.cuda(), 1e-5, act)
                self.assertEqual(got.device.type, "cuda")
                self.assertEqual(got.dtype, dtype)
                # one row's sum of squares, in double on both: a different summation order, nothing else
                torch.testing.assert_close(got.cpu(), want, rtol=1e-6 if dtype in (torch.float32, torch.float64)
                                           else 1.6e-2, atol=1e-6)
        empty = stable_ops.rms_norm_act(torch.empty(0, 8, device="cuda"), torch.ones(8, device="cuda"))
        self.assertEqual(empty.shape, (0, 8))
        with self.assertRaises(RuntimeError):  # weight on another device
            stable_ops.rms_norm_act(torch.randn(2, 4, device="cuda"), torch.randn(4))

    def test_rms_norm_act_on_the_current_stream(self):
        """A kernel launched on another stream than the current one would read x before the side stream writes it."""
        x, w = torch.randn(64, 1024, device="cuda"), torch.randn(1024, device="cuda")
        want = stable_ops.rms_norm_act(x, w)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.cuda._sleep(100_000_000)  # the side stream is busy: what follows on it runs later
            late = x * 1.0
            got = stable_ops.rms_norm_act(late, w)
        side.synchronize()
        self.assertTrue(torch.equal(got, want))

    def test_composite_ops_on_cuda_match_cpu(self):
        cpu = torch.device("cpu")  # explicit: STABLE_OPS_TEST_DEVICE=cuda makes CUDA the default
        x = torch.randn(7, 33, device=cpu) * 5
        q, scale = stable_ops.quantize_int8(x)
        qc, scalec = stable_ops.quantize_int8(x.cuda())
        self.assertTrue(torch.equal(qc.cpu(), q))
        torch.testing.assert_close(scalec.cpu(), scale, rtol=0, atol=0)
        self.assertTrue(torch.equal(stable_ops.dequantize_int8(qc, scalec).cpu(), stable_ops.dequantize_int8(q, scale)))
        acc = torch.randint(-(2**20), 2**20, (5, 9), dtype=torch.int32, device=cpu)
        self.assertTrue(torch.equal(stable_ops.requantize_int8(acc.cuda(), 1234567, 31).cpu(),
                                    stable_ops.requantize_int8(acc, 1234567, 31)))
        mask = torch.rand(4, 6, 8, device=cpu) > 0.4
        xm = torch.randn(4, 6, 8, device=cpu)
        torch.testing.assert_close(stable_ops.masked_softmax(xm.cuda(), mask.cuda()).cpu(),
                                   stable_ops.masked_softmax(xm, mask))


if __name__ == "__main__":
    unittest.main()
