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
