using System.CommandLine;
using System.Globalization;
using SieveQ.Controller;
using SieveQ.Deployment;
using SieveQ.Transport;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq admin status|audit|quarantine|readmit|rules push|rules rollback|pre-sq start|stop|replace|replica start|recover|round --key FILE`: the controller's management API, each request signed with
/// the caller's key (the controller checks it is pinned and what its role allows). Exit codes: 0 done, 1 refused or
/// unreachable, 2 usage, 3 recorded but not applied
/// (the replicas refused it, no pre-SQ took it, the controller holds no command key, or it runs no orchestrator).
/// </summary>
internal static class AdminCommands
{
    public static Command Build()
    {
        var admin = new Command("admin", "Manage a running deployment through its controller (signed, role-checked, audited).");
        admin.Subcommands.Add(Status());
        admin.Subcommands.Add(Audit());
        admin.Subcommands.Add(PartyAction("quarantine", "Quarantine a sender or a pre-SQ until readmitted, ordered through the replicas (operator)."));
        admin.Subcommands.Add(PartyAction("readmit", "End a sender's or pre-SQ's quarantine and clear its suspicion, ordered through the replicas (operator)."));
        admin.Subcommands.Add(AdminRuleSetCommands.Build(WithClient));
        admin.Subcommands.Add(AdminPreSqCommands.Build(WithClient));
        admin.Subcommands.Add(AdminReplicaCommands.Build(WithClient));
        return admin;
    }

    /// <summary>Gives <paramref name="cmd"/> the options every admin command has and runs its action with a signed client.</summary>
    private static Command WithClient(Command cmd, Func<ParseResult, CancellationToken, Func<ManagementClient, Task<int>>> action)
    {
        var common = AddCommon(cmd);
        cmd.SetAction((parse, ct) => CallAsync(parse, common, action(parse, ct)));
        return cmd;
    }

    private sealed record Common(Option<FileInfo> Key, Option<string?> Controller, Option<string?> ControllerPin, Option<DirectoryInfo> Deployment);

    private static Common AddCommon(Command cmd)
    {
        var key = new Option<FileInfo>("--key") { Description = "Your management key (PEM; a local deployment's are keys/management-{administrator,operator,viewer}.pem).", Required = true };
        var controller = new Option<string?>("--controller") { Description = "The controller's URL (default: the one in the deployment's controller.json)." };
        var deployment = DeploymentOption.WithDefault("Deployment directory, to find the controller's URL.");
        var pin = new Option<string?>("--controller-pin") { Description = "With an https:// --controller: its TLS key pin (base64 SHA-256 of the SubjectPublicKeyInfo, as in controller.json)." };
        cmd.Options.Add(key);
        cmd.Options.Add(controller);
        cmd.Options.Add(pin);
        cmd.Options.Add(deployment);
        return new Common(key, controller, pin, deployment);
    }

    private static Command Status()
    {
        var cmd = new Command("status", "Every component's health as the controller sees it, and the audit log's head (viewer).");
        return WithClient(cmd, (parse, ct) => async client =>
        {
            var status = await client.StatusAsync(ct).ConfigureAwait(false);
            Console.WriteLine($"caller      {status.Caller}");
            foreach (var c in status.Components)
            {
                var state = c.Healthy ? "healthy" : c.Reachable ? "UNHEALTHY" : "DOWN";
                Console.WriteLine($"{c.Component,-11} {c.Name,-14} {state,-9} {c.Endpoint}  {c.Detail}");
            }
            Console.WriteLine($"{status.Components.Count(c => c.Healthy)}/{status.Components.Count} components healthy");
            Console.WriteLine($"audit log   record {status.AuditLastSequence}, hash {status.AuditLastHash}");
            return 0;
        });
    }

    private static Command Audit()
    {
        var count = new Option<int>("--count") { Description = $"How many of the newest records (at most {ManagementApi.MaxAuditTail}).", DefaultValueFactory = _ => 20 };
        var cmd = new Command("audit", "The newest records of the controller's audit log (viewer).") { count };
        return WithClient(cmd, (parse, ct) => async client =>
        {
            var tail = await client.AuditTailAsync(parse.GetValue(count), ct).ConfigureAwait(false);
            foreach (var e in tail.Entries)
            {
                var time = DateTimeOffset.FromUnixTimeMilliseconds(e.TimeUnixMs).UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss.fff", CultureInfo.InvariantCulture);
                Console.WriteLine($"{e.Sequence,6} {time}Z  {e.Actor}  {e.Action} {e.Target}: {e.Outcome}  [{e.Hash[..16]}]");
            }
            return 0;
        });
    }

    private static Command PartyAction(string name, string description)
    {
        var sender = new Option<uint?>("--sender") { Description = "The sender's id." };
        var preSq = new Option<uint?>("--pre-sq") { Description = "The pre-SQ's id." };
        var reason = ReasonOption();
        var cmd = new Command(name, description) { sender, preSq, reason };
        var common = AddCommon(cmd);
        cmd.SetAction(async (parse, ct) =>
        {
            if ((parse.GetValue(sender) is null) == (parse.GetValue(preSq) is null))
            {
                await Console.Error.WriteLineAsync("error: name exactly one party: --sender ID or --pre-sq ID").ConfigureAwait(false);
                return 2;
            }
            return await CallAsync(parse, common, client => ActAsync(client, parse, ct)).ConfigureAwait(false);
        });
        return cmd;

        async Task<int> ActAsync(ManagementClient client, ParseResult parse, CancellationToken ct)
        {
            var r = parse.GetValue(reason) ?? "";
            var quarantine = name == "quarantine";
            var reply = (parse.GetValue(sender), parse.GetValue(preSq)) switch
            {
                ({ } s, _) => quarantine ? await client.QuarantineSenderAsync(s, r, ct).ConfigureAwait(false) : await client.ReadmitSenderAsync(s, r, ct).ConfigureAwait(false),
                (_, { } p) => quarantine ? await client.QuarantinePreSqAsync(p, r, ct).ConfigureAwait(false) : await client.ReadmitPreSqAsync(p, r, ct).ConfigureAwait(false),
                _ => throw new InvalidOperationException("validated above"),
            };
            return Report(reply);
        }
    }

    /// <summary>The `--reason` every admin action takes.</summary>
    internal static Option<string> ReasonOption() =>
        new("--reason") { Description = $"Why (recorded in the audit log, up to {ManagementApi.MaxReasonLength} characters).", DefaultValueFactory = _ => "" };

    /// <summary>Prints an admin action's reply ("VERB" or "NOT VERB", its audit record, its status) and returns the exit code: 0 carried out, 3 not.</summary>
    /// <summary>A command on one component by `--id N [--reason TEXT]`, reported as every admin command ("done").</summary>
    internal static Command IdAction(WithManagementClient withClient, string name, string description, string idDescription,
        Func<ManagementClient, uint, string, CancellationToken, Task<SieveQ.Protocol.V1.ManagementActionReply>> call)
    {
        var id = new Option<uint>("--id") { Description = idDescription, Required = true };
        var reason = ReasonOption();
        var cmd = new Command(name, description) { id, reason };
        return withClient(cmd, (parse, ct) => async client =>
            Report(await call(client, parse.GetValue(id), parse.GetValue(reason) ?? "", ct).ConfigureAwait(false), "done"));
    }

    internal static int Report(SieveQ.Protocol.V1.ManagementActionReply reply, string verb = "applied")
    {
        ArgumentNullException.ThrowIfNull(reply);
        Console.WriteLine($"{(reply.Applied ? verb : "NOT " + verb)} (audit record {reply.AuditSequence}): {reply.Status}");
        return reply.Applied ? 0 : 3;
    }

    private static async Task<int> CallAsync(ParseResult parse, Common common, Func<ManagementClient, Task<int>> call)
    {
        Uri url;
        SieveQ.Transport.Tls.TlsPin? pin;
        System.Security.Cryptography.ECDsa key;
        try
        {
            var configured = parse.GetValue(common.Controller) is { } given
                ? new ControllerConfig { Url = given, TlsPin = parse.GetValue(common.ControllerPin), Callers = [] }
                : ControllerConfig.Load(parse.GetValue(common.Deployment)!.FullName);
            pin = configured.Pin();
            url = new Uri(configured.Url);
            key = ManagementKeyFile.Read(parse.GetValue(common.Key)!.FullName);
        }
        catch (DeploymentException e)
        {
            await Console.Error.WriteLineAsync($"error: {e.Message}").ConfigureAwait(false);
            return 2;
        }
        using (key)
        using (var client = new ManagementClient(url, key, pin: pin))
        {
            try
            {
                return await call(client).ConfigureAwait(false);
            }
            catch (GrpcCallException e)
            {
                await Console.Error.WriteLineAsync($"refused by {url}: {e.Message}").ConfigureAwait(false);
                return 1;
            }
            catch (HttpRequestException e)
            {
                await Console.Error.WriteLineAsync($"cannot reach the controller at {url}: {e.Message}").ConfigureAwait(false);
                return 1;
            }
        }
    }
}
