using SieveQ.Cli.Commands;

namespace SieveQ.Cli.Tests;

public sealed class ComponentLaunchTests
{
    [Fact]
    public void Components_start_with_the_larger_gen0_budget_unless_the_operator_set_one()
    {
        var psi = ClusterProcesses.SelfCommand(["replica-sq", "--id", "0"]);
        var inherited = Environment.GetEnvironmentVariable(ClusterProcesses.Gen0SizeVariable);
        Assert.Equal(inherited ?? ClusterProcesses.ComponentGen0Size, psi.Environment[ClusterProcesses.Gen0SizeVariable]);
        Assert.Equal(["replica-sq", "--id", "0"], psi.ArgumentList.TakeLast(3));
    }
}

/// <summary>Misbehaviour lives in the test projects: the shipped binary has no switch that makes a component lie.</summary>
public sealed class NoFaultSwitchTests
{
    [Theory]
    [InlineData("pre-sq", "drop")]
    [InlineData("pre-sq", "tamper")]
    [InlineData("replica-sq", "corrupt-bodies")]
    public async Task A_component_refuses_a_fault_option(string component, string fault)
    {
        var (code, stdout, stderr) = await SieveqProcess.RunAsync([component, "--deployment", Path.GetTempPath(), "--id", "4", "--fault", fault]);
        Assert.NotEqual(0, code);
        Assert.Contains("--fault", stdout + stderr, StringComparison.Ordinal);
    }
}
