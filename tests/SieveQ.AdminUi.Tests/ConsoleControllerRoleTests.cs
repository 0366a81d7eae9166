using SieveQ.AdminUi.Hosting;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// `init` pins the console's key at the controller with the role asked for: operator by default, administrator only
/// when asked (the Pre-SQs page's start, stop and replace need it), never a viewer; a later init with another role
/// re-pins the same key.
/// </summary>
public sealed class ConsoleControllerRoleTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-role-").FullName;

    [Fact]
    public async Task Init_pins_the_console_as_an_operator_unless_told_administrator_and_refuses_a_viewer()
    {
        await BareConsoleDeployment.CreateAsync(_dir);
        Assert.Equal(ManagementRole.Operator, ConsoleCaller().Role);
        var key = ConsoleCaller().PublicKey;

        await BareConsoleDeployment.CreateAsync(_dir, ManagementRole.Administrator);
        Assert.Equal(ManagementRole.Administrator, ConsoleCaller().Role);
        Assert.Equal(key, ConsoleCaller().PublicKey);

        var e = await Assert.ThrowsAsync<ArgumentException>(() => BareConsoleDeployment.CreateAsync(_dir, ManagementRole.Viewer));
        Assert.Contains("operator or administrator", e.Message, StringComparison.Ordinal);
        // Refused before anything was written: the pin is still the administrator's.
        Assert.Equal(ManagementRole.Administrator, ConsoleCaller().Role);
    }

    private ControllerCallerEntry ConsoleCaller() =>
        ControllerConfig.Load(DeploymentFile.Load(_dir).BaseDirectory).Callers.Single(c => c.Name == ConsoleConfig.CallerName);

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
