using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Policy;

namespace SieveQ.Firewall.Tests;

public class GoldenVectorTests
{
    [Theory]
    [InlineData("minimal")]
    [InlineData("workstation")]
    [InlineData("audit-v6")]
    public async Task Compiler_writes_the_golden_bytes(string name)
    {
        string dir = NativeLibraryFixture.GoldenDirectory;
        var policy = await EndpointPolicy.LoadAsync(Path.Combine(dir, name + ".json"), CancellationToken.None);
        byte[] expected = await File.ReadAllBytesAsync(Path.Combine(dir, name + ".bin"));

        byte[] actual = PolicyCompiler.Compile(policy);

        Assert.Equal(expected.Length, actual.Length);
        int firstDifference = Enumerable.Range(0, expected.Length).FirstOrDefault(i => expected[i] != actual[i], -1);
        Assert.True(firstDifference < 0, $"first differing byte at offset {firstDifference}");
    }

    [Theory]
    [InlineData("minimal")]
    [InlineData("workstation")]
    [InlineData("audit-v6")]
    public async Task Golden_bytes_pass_the_driver_parser(string name)
    {
        NativeLibraryFixture.EnsureLoaded();
        byte[] blob = await File.ReadAllBytesAsync(Path.Combine(NativeLibraryFixture.GoldenDirectory, name + ".bin"));
        var result = CoreDriverBridge.Check(blob);
        Assert.True(result.Accepted, result.StatusName);
    }
}
