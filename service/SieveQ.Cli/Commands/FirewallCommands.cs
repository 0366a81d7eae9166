using System.CommandLine;
using System.Globalization;
using System.Net;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Policy;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq fw`: layer 0. Compile an endpoint policy to the driver's blob, check a blob with the
/// driver's own parser, and explain which rule decides a connection using the same core code
/// (libsieveqfw.so, built by `make -C driver`).
/// </summary>
internal static class FirewallCommands
{
    public static Command Build()
    {
        var fw = new Command("fw", "The WFP driver's policy: compile, check, explain.");
        fw.Subcommands.Add(BuildCompile());
        fw.Subcommands.Add(BuildCheck());
        fw.Subcommands.Add(BuildExplain());
        return fw;
    }

    private static void UseCoreLibrary()
    {
        string? lib = CoreLibrary.Locate(Environment.CurrentDirectory, AppContext.BaseDirectory);
        if (lib is not null)
        {
            CoreLibrary.Use(lib);
        }
    }

    private static Command BuildCompile()
    {
        var policy = new Argument<string>("policy") { Description = "Endpoint policy (JSON)." };
        var output = new Option<string>("-o", "--output") { Description = "Blob file to write.", Required = true };
        var cmd = new Command("compile", "Compile an endpoint policy JSON into the driver's binary blob.") { policy, output };
        cmd.SetAction(async (ParseResult pr, CancellationToken ct) =>
        {
            try
            {
                var p = await EndpointPolicy.LoadAsync(pr.GetValue(policy)!, ct).ConfigureAwait(false);
                byte[] blob = PolicyCompiler.Compile(p);
                await File.WriteAllBytesAsync(pr.GetValue(output)!, blob, ct).ConfigureAwait(false);
                Console.WriteLine($"wrote {blob.Length} bytes (serial {p.Serial}, {p.Applications.Count} applications, " +
                    $"{p.Applications.Sum(a => a.Allow.Count)} rules)");
                return 0;
            }
            catch (PolicyException e)
            {
                await Console.Error.WriteLineAsync($"policy rejected: {e.Message}").ConfigureAwait(false);
                return 1;
            }
        });
        return cmd;
    }

    private static Command BuildCheck()
    {
        var blob = new Argument<string>("blob") { Description = "Policy blob to validate." };
        var cmd = new Command("check", "Validate a policy blob with the driver's parser (whole-blob, with error offset).") { blob };
        cmd.SetAction(async (ParseResult pr, CancellationToken ct) =>
        {
            UseCoreLibrary();
            byte[] bytes = await File.ReadAllBytesAsync(pr.GetValue(blob)!, ct).ConfigureAwait(false);
            var result = CoreDriverBridge.Check(bytes);
            if (!result.Accepted)
            {
                Console.WriteLine($"rejected: {result.StatusName} at offset {result.ErrorOffset}");
                return 1;
            }
            // installing it compiles the lookup tables too (duplicate identities are found there)
            await using var bridge = new CoreDriverBridge();
            var pushed = await bridge.PushPolicyAsync(bytes, ct).ConfigureAwait(false);
            if (!pushed.Accepted)
            {
                Console.WriteLine($"rejected: {pushed.StatusName} at offset {pushed.ErrorOffset}");
                return 1;
            }
            var stats = await bridge.GetStatisticsAsync(ct).ConfigureAwait(false);
            Console.WriteLine($"ok: {bytes.Length} bytes, serial {stats.PolicySerial}, {stats.PolicyRules} rules, {stats.LevelCount} levels");
            return 0;
        });
        return cmd;
    }

    private static Command BuildExplain()
    {
        var app = new Argument<string>("app") { Description = "Image path as the driver sees it (or a service with --service)." };
        var remote = new Argument<string>("remote") { Description = "Remote address (IPv4 or IPv6)." };
        var policy = new Option<string>("--policy") { Description = "Policy JSON or compiled blob.", Required = true };
        var port = new Option<int>("--port") { Description = "Service port (remote outbound, local inbound).", DefaultValueFactory = _ => 443 };
        var proto = new Option<string>("--proto") { Description = "tcp or udp.", DefaultValueFactory = _ => "tcp" };
        var inbound = new Option<bool>("--inbound") { Description = "Explain an inbound connection (recv-accept)." };
        var service = new Option<string?>("--service") { Description = "svchost service name hosting the connection." };
        var user = new Option<string?>("--user") { Description = "User SID of the process." };
        var sha = new Option<string?>("--sha256") { Description = "Image SHA-256, as the agent would attest it." };
        var cmd = new Command("explain", "Say which rule would decide a connection, using the driver's core.")
        {
            app, remote, policy, port, proto, inbound, service, user, sha,
        };
        cmd.SetAction(async (ParseResult pr, CancellationToken ct) =>
        {
            if (ExplainInputError(pr.GetValue(remote)!, pr.GetValue(port), pr.GetValue(proto)!, pr.GetValue(sha)) is string bad)
            {
                await Console.Error.WriteLineAsync(bad).ConfigureAwait(false);
                return 2;
            }
            UseCoreLibrary();
            string policyPath = pr.GetValue(policy)!;
            if (!File.Exists(policyPath))
            {
                await Console.Error.WriteLineAsync($"policy file not found: {policyPath}").ConfigureAwait(false);
                return 2;
            }
            byte[] blob;
            try
            {
                blob = policyPath.EndsWith(".json", StringComparison.OrdinalIgnoreCase)
                    ? PolicyCompiler.Compile(await EndpointPolicy.LoadAsync(policyPath, ct).ConfigureAwait(false))
                    : await File.ReadAllBytesAsync(policyPath, ct).ConfigureAwait(false);
            }
            catch (PolicyException e)
            {
                await Console.Error.WriteLineAsync($"policy rejected: {e.Message}").ConfigureAwait(false);
                return 2;
            }
            var address = IPAddress.Parse(pr.GetValue(remote)!);
            await using var bridge = new CoreDriverBridge();
            var pushed = await bridge.PushPolicyAsync(blob, ct).ConfigureAwait(false);
            if (!pushed.Accepted)
            {
                await Console.Error.WriteLineAsync($"policy rejected: {pushed.StatusName} at offset {pushed.ErrorOffset}").ConfigureAwait(false);
                return 2;
            }
            var query = new ConnectionQuery
            {
                ImagePath = pr.GetValue(app)!,
                Remote = address,
                Port = (ushort)pr.GetValue(port),
                Protocol = pr.GetValue(proto)!.Equals("udp", StringComparison.OrdinalIgnoreCase) ? (byte)17 : (byte)6,
                Direction = pr.GetValue(inbound) ? ConnectionDirection.Inbound : ConnectionDirection.Outbound,
                Service = pr.GetValue(service),
                User = pr.GetValue(user),
            };
            if (pr.GetValue(sha) is string hex)
            {
                await bridge.AttestAsync(query.ProcessKey, Convert.FromHexString(hex), ct).ConfigureAwait(false);
            }
            var d = await bridge.ExplainAsync(query, ct).ConfigureAwait(false);
            string rule = d.RuleId != 0 ? $"rule {d.RuleId.ToString(CultureInfo.InvariantCulture)}" : "no rule";
            Console.WriteLine($"{d.Verdict.ToString().ToLowerInvariant()}: {Describe(d.Reason)} ({rule}, application {d.IdentityId}, class {d.ClassId}, level {d.Level}{(d.Audited ? ", audit mode" : "")})");
            return d.Verdict == Verdict.Allow ? 0 : 1;
        });
        return cmd;
    }

    /// <summary>Why the explain arguments cannot describe a connection, or null when they can.</summary>
    internal static string? ExplainInputError(string remote, int port, string proto, string? sha256)
    {
        if (!IPAddress.TryParse(remote, out _))
        {
            return $"remote must be an IP address, not '{remote}'";
        }
        if (port is < 0 or > 65535)
        {
            return $"--port must be 0 to 65535, not {port}";
        }
        if (!proto.Equals("tcp", StringComparison.OrdinalIgnoreCase) && !proto.Equals("udp", StringComparison.OrdinalIgnoreCase))
        {
            return $"--proto must be tcp or udp, not '{proto}'";
        }
        if (sha256 is not null && (sha256.Length != 64 || !sha256.All(char.IsAsciiHexDigit)))
        {
            return "--sha256 must be 64 hexadecimal digits";
        }
        return null;
    }

    private static string Describe(DecisionReason reason) => reason switch
    {
        DecisionReason.Rule => "an allow rule matches",
        DecisionReason.NoRule => "the application is known but no rule covers this remote",
        DecisionReason.UnknownApp => "no application in the policy matches this process",
        DecisionReason.NeedsHash => "the image hash must be checked first (the driver pends the connect)",
        DecisionReason.HashMismatch => "the image hash differs from the policy",
        DecisionReason.UserMismatch => "the process runs as another user",
        DecisionReason.Loopback => "loopback traffic is allowed",
        DecisionReason.DnsClient => "DNS from the DNS client service is allowed",
        DecisionReason.Level => "the class is not admitted at the current QGuard level",
        _ => reason.ToString(),
    };
}
