using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// The least a console starts on: a deployment.json naming one replica-SQ and one pre-SQ nobody serves (the console
/// reads the file, and these tests never reach them), then the console's own `init` (its key, accounts, console.json).
/// </summary>
internal static class BareConsoleDeployment
{
    public static Task<(ConsoleConfig Config, string? AdministratorPassword)> CreateAsync(string directory,
        SieveQ.Controller.Access.ManagementRole controllerRole = ConsoleSetup.DefaultControllerRole)
    {
        DeploymentFile.Save(new DeploymentConfig
        {
            F = 0,
            Replicas = [new ReplicaSqEntry { Id = 0, Name = "replica-sq-0", ApiUrl = "http://127.0.0.1:1" }],
            PreSqs = [new PreSqEntry { Id = 1, Name = "pre-sq-1", Url = "http://127.0.0.1:2" }],
            Agents = [],
        }, Path.Combine(directory, DeploymentFile.FileName));
        return ConsoleSetup.InitAsync(directory, "admin", controllerRole, CancellationToken.None);
    }
}
