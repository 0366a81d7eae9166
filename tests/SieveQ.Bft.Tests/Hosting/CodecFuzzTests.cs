using SieveQ.Bft.Hosting.Fuzz;

namespace SieveQ.Bft.Tests.Hosting;

public sealed class CodecFuzzTests
{
    [Fact]
    public void DecoderAndFrameReaderOnlyEverRejectAsMalformed()
    {
        var report = CodecFuzzer.Run(iterations: 30_000, seed: 20_261_122);
        Assert.True(report.Passed, string.Join(Environment.NewLine, report.Failures));
        Assert.True(report.Rejected > 0 && report.Accepted > 0, "the fuzzer should exercise both outcomes");
    }
}
