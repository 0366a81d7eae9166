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

public sealed class WalFuzzTests
{
    [Fact]
    public void The_log_reader_never_throws_on_damaged_segments()
    {
        var report = WalFuzzer.Run(iterations: 20_000, seed: 20_261_124);
        Assert.True(report.Passed, string.Join(Environment.NewLine, report.Failures));
        Assert.True(report.Rejected > 0 && report.Accepted > 0, "the fuzzer should see both readable records and damage");
    }
}
