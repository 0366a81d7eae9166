using System.Globalization;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Cli.Running;

/// <summary>
/// `sieveq up`'s start of the replica-SQs and pre-SQs: asks the controller (StartReplica, StartPreSq, signed with the
/// deployment's administrator key) to start each as its own child process, so that the controller, which replaces a
/// pre-SQ on f+1 replicas' notice and recovers replicas, owns the processes it acts on; `up` then waits for their
/// health as for any component. Each start is in the audit log.
/// </summary>
internal sealed class ControllerComponentStarter : IDisposable
{
    private readonly System.Security.Cryptography.ECDsa _key;
    private readonly ManagementClient _client;

    public ControllerComponentStarter(DeploymentConfig deployment, ControllerConfig controller)
    {
        _key = ManagementKeyFile.Read(ControllerConfig.LocalKeyFile(deployment, ManagementRole.Administrator));
        _client = new ManagementClient(new Uri(controller.Url), _key, pin: controller.Pin());
    }

    /// <summary>For <see cref="LaunchOptions.HostInProcess"/>: true once the controller started the component; other roles are left to the launcher.</summary>
    public async Task<bool> StartAsync(string role, int id)
    {
        var name = $"{role}-{id.ToString(CultureInfo.InvariantCulture)}";
        Func<Task<ManagementActionReply>> start = role switch
        {
            "pre-sq" => () => _client.PreSqLifecycleAsync(ControllerNames.StartPreSq, (uint)id, "sieveq up"),
            "replica-sq" => () => _client.ReplicaLifecycleAsync(ControllerNames.StartReplica, (uint)id, "sieveq up"),
            _ => null!,
        };
        if (start is null)
        {
            return false;
        }
        ManagementActionReply reply;
        try
        {
            reply = await start().ConfigureAwait(false);
        }
        catch (GrpcCallException e)
        {
            throw new DeploymentException($"the controller refused to start {name}: {e.Message}");
        }
        catch (HttpRequestException e)
        {
            throw new DeploymentException($"the controller did not answer the start of {name} (has it stopped?): {e.Message}");
        }
        return reply.Applied
            ? true
            : throw new DeploymentException($"the controller did not start {name}: {reply.Status}");
    }

    public void Dispose()
    {
        _client.Dispose();
        _key.Dispose();
    }
}
