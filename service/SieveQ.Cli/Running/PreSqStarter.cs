using System.Globalization;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Cli.Running;

/// <summary>
/// `sieveq up`'s pre-SQ start: asks the controller (StartPreSq, signed with the deployment's administrator key) to
/// start each pre-SQ as its own child process, so that the controller, which replaces a pre-SQ on f+1 replicas'
/// notice, owns the processes it replaces; `up` then waits for their health as for any component. Each start is in
/// the audit log.
/// </summary>
internal sealed class PreSqStarter : IDisposable
{
    private readonly System.Security.Cryptography.ECDsa _key;
    private readonly ManagementClient _client;

    public PreSqStarter(DeploymentConfig deployment, ControllerConfig controller)
    {
        _key = ManagementKeyFile.Read(ControllerConfig.LocalKeyFile(deployment, ManagementRole.Administrator));
        _client = new ManagementClient(new Uri(controller.Url), _key, pin: controller.Pin());
    }

    /// <summary>For <see cref="LaunchOptions.HostInProcess"/>: true once the controller started the pre-SQ; other roles are left to the launcher.</summary>
    public async Task<bool> StartAsync(string role, int id)
    {
        if (role != "pre-sq")
        {
            return false;
        }
        ManagementActionReply reply;
        try
        {
            reply = await _client.PreSqLifecycleAsync(ControllerNames.StartPreSq, (uint)id, "sieveq up").ConfigureAwait(false);
        }
        catch (GrpcCallException e)
        {
            throw new DeploymentException($"the controller refused to start pre-sq-{id.ToString(CultureInfo.InvariantCulture)}: {e.Message}");
        }
        catch (HttpRequestException e)
        {
            throw new DeploymentException($"the controller did not answer the start of pre-sq-{id.ToString(CultureInfo.InvariantCulture)} (has it stopped?): {e.Message}");
        }
        return reply.Applied
            ? true
            : throw new DeploymentException($"the controller did not start pre-sq-{id.ToString(CultureInfo.InvariantCulture)}: {reply.Status}");
    }

    public void Dispose()
    {
        _client.Dispose();
        _key.Dispose();
    }
}
