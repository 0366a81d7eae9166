using SieveQ.AdminUi.Access;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// `init`: makes a deployment ready for the console. Creates console.json, the console's management key, pins that
/// key in controller.json with the role asked for (before the controller starts: it pins its callers at start), and
/// creates the first administrator with a generated password, returned once to be printed once.
/// </summary>
public static class ConsoleSetup
{
    /// <summary>
    /// The console's role at the controller unless init is told otherwise: quarantine/readmit and the console's other
    /// changes need operator. The pre-SQs page's start, stop and replace need administrator there, and are refused
    /// (audited) while the key stays an operator: a web-facing process's key gets the power to stop components only when
    /// whoever sets up the deployment says so (`init --controller-role administrator`; `sieveq up` does, since its
    /// administrator key sits in the same folder anyway).
    /// </summary>
    public const ManagementRole DefaultControllerRole = ManagementRole.Operator;

    /// <param name="controllerRole">Operator or administrator (a viewer console could change nothing).</param>
    /// <returns>The console configuration and, when the administrator account was created now, its password.</returns>
    public static async Task<(ConsoleConfig Config, string? AdministratorPassword)> InitAsync(string deploymentDirectory, string administrator,
        ManagementRole controllerRole, CancellationToken ct)
    {
        if (controllerRole is not (ManagementRole.Operator or ManagementRole.Administrator))
        {
            throw new ArgumentException($"the console's role at the controller must be operator or administrator, not {controllerRole}", nameof(controllerRole));
        }
        var deployment = DeploymentFile.Load(deploymentDirectory);
        var controller = ControllerConfig.EnsureLocal(deployment);
        var cfg = File.Exists(ConsoleConfig.PathIn(deployment.BaseDirectory)) ? ConsoleConfig.Load(deployment.BaseDirectory) : ConsoleConfig.CreateLocal();
        cfg.Save(deployment.BaseDirectory);
        var keyFile = deployment.Resolve(cfg.KeyFile);
        using var key = File.Exists(keyFile) ? ManagementKeyFile.Read(keyFile) : ManagementKeyFile.Create(keyFile);
        var publicKey = Convert.ToBase64String(key.ExportSubjectPublicKeyInfo());
        var pinned = controller.Callers.FirstOrDefault(c => c.Name == ConsoleConfig.CallerName);
        if (pinned is null || pinned.PublicKey != publicKey || pinned.Role != controllerRole)
        {
            var callers = controller.Callers.Where(c => c.Name != ConsoleConfig.CallerName).ToList();
            callers.Add(new ControllerCallerEntry { Name = ConsoleConfig.CallerName, Role = controllerRole, PublicKey = publicKey });
            (controller with { Callers = callers }).Save(deployment.BaseDirectory);
        }
        var users = ConsoleUserStore.Open(deployment.Resolve(cfg.UsersFile), cfg);
        string? password = null;
        if (users.Count == 0)
        {
            password = await users.AddAsync(administrator, ConsoleRole.Administrator, ct).ConfigureAwait(false);
        }
        return (cfg, password);
    }
}
