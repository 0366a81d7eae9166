using System.CommandLine;
using System.Security.Cryptography;
using SieveQ.Deployment;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq enrol request|sender|receiver|revoke`: enrolment of senders and receivers through the ordering, with no
/// restart. The party's host makes its own keys and a request with proof of possession; the administrator signs an
/// enrolment (or a revocation) that a pre-SQ carries into the ordering; what f+1 replicas agreed on is printed. Exit
/// codes: 0 applied, 1 error (unreadable request or key, no pre-SQ reachable), 2 bad arguments, 3 refused by the replicas.
/// </summary>
internal static class EnrolCommands
{
    private static readonly TimeSpan SubmitTimeout = TimeSpan.FromSeconds(30);

    public static IEnumerable<Command> Build() => [Request(), Enrol(receiver: false), Enrol(receiver: true), Revoke()];

    private static Command Request()
    {
        var name = new Option<string>("--name") { Description = "The party's name (letters, digits, '-', '_', '.'): its keys are NAME-sign and NAME-agree, which the SDK opens with KeyName = NAME (or, named sender-ID or receiver-ID, by default under id ID).", Required = true };
        var output = new Option<DirectoryInfo>("--out") { Description = "Directory for the private keys (owner-only PEM) and the request (NAME.enrol-request.json).", Required = true };
        var cmd = new Command("request", "On the sender's or receiver's host: create its key pairs and an enrolment request with proof of possession.") { name, output };
        cmd.SetAction(parse =>
        {
            try
            {
                var dir = parse.GetValue(output)!.FullName;
                var n = parse.GetValue(name)!;
                var request = PartyEnrolmentRequest.Create(dir, n);
                var path = Path.Combine(dir, PartyEnrolmentRequest.FileName(n));
                File.WriteAllText(path, request.ToJson());
                Console.WriteLine($"keys {n}-sign and {n}-agree created in {dir} (owner-only); request written to {path}");
                return 0;
            }
            catch (Exception e) when (e is DeploymentException or ArgumentException or IOException or UnauthorizedAccessException or CryptographicException)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 1;
            }
        });
        return cmd;
    }

    private static Command Enrol(bool receiver)
    {
        var role = receiver ? "receiver" : "sender";
        var request = new Option<FileInfo>("--request") { Description = $"The {role}'s request (written by `sieveq enrol request`).", Required = true };
        var id = new Option<int>("--id") { Description = $"The {role} id to enrol it under (default: the next free id above every sender and receiver, picked by the replicas)." };
        var (deployment, key) = Common();
        var cmd = new Command(role, $"Enrol a {role} through the ordering: every replica and pre-SQ takes it without restart.") { request, id, deployment, key };
        cmd.SetAction(async (parse, ct) =>
        {
            PartyEnrolmentRequest r;
            try
            {
                r = PartyEnrolmentRequest.Load(parse.GetValue(request)!.FullName);
            }
            catch (DeploymentException e)
            {
                await Console.Error.WriteLineAsync($"error: {e.Message}").ConfigureAwait(false);
                return 1;
            }
            var target = parse.GetValue(id);
            if (target < 0)
            {
                await Console.Error.WriteLineAsync("error: --id must not be negative").ConfigureAwait(false);
                return 2;
            }
            return await SubmitAsync(parse.GetValue(deployment)!, parse.GetValue(key)!,
                (s, c) => receiver ? s.EnrolReceiverAsync(target, r.Claim(), c) : s.EnrolSenderAsync(target, r.Claim(), c), ct).ConfigureAwait(false);
        });
        return cmd;
    }

    private static Command Revoke()
    {
        var sender = new Option<int?>("--sender") { Description = "The sender's id." };
        var receiver = new Option<int?>("--receiver") { Description = "The receiver's id." };
        var (deployment, key) = Common();
        var cmd = new Command("revoke",
            "Revoke a sender or a receiver through the ordering: its traffic is refused from then on (a receiver's undelivered queue is let go) and its id is never enrolled again, in any role.")
        {
            sender, receiver, deployment, key,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            var (s, r) = (parse.GetValue(sender), parse.GetValue(receiver));
            if (s is null == r is null || (s ?? r) < 0)
            {
                await Console.Error.WriteLineAsync("error: name exactly one party to revoke, --sender ID or --receiver ID (ids are not negative)").ConfigureAwait(false);
                return 2;
            }
            var (op, target) = s is { } sid ? (AdminOp.RevokeSender, sid) : (AdminOp.RevokeReceiver, r!.Value);
            return await SubmitAsync(parse.GetValue(deployment)!, parse.GetValue(key)!, (submitter, c) => submitter.ApplyAsync(op, target, c), ct).ConfigureAwait(false);
        });
        return cmd;
    }

    internal static (Option<DirectoryInfo> Deployment, Option<FileInfo> Key) Common() =>
        (DeploymentOption.Required("Deployment directory (deployment.json)."), new Option<FileInfo>("--key")
        {
            Description = "Administrator private key (PEM, ECDSA P-256): the deployment's pinned administrator key (keys/administrator.pem in a local deployment).",
            Required = true,
        });

    internal static async Task<int> SubmitAsync(DirectoryInfo dir, FileInfo keyFile, Func<AdminCommandSubmitter, CancellationToken, Task<AdminCommandReport>> submit,
        CancellationToken ct)
    {
        try
        {
            var cfg = DeploymentFile.Load(dir.FullName);
            using var admin = ECDsa.Create();
            try
            {
                admin.ImportFromPem(await File.ReadAllTextAsync(keyFile.FullName, ct).ConfigureAwait(false));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or CryptographicException)
            {
                throw new DeploymentException($"cannot use {keyFile.FullName} as the administrator key: {e.Message}", e);
            }
            var report = await submit(new AdminCommandSubmitter(cfg, admin, SubmitTimeout), ct).ConfigureAwait(false);
            if (report.Applied)
            {
                Console.WriteLine($"APPLIED (agreed by f+1 replica-SQs, via {report.Via}): {report.Status}");
                return 0;
            }
            if (report.Via is null)
            {
                await Console.Error.WriteLineAsync($"error: {report.Status}").ConfigureAwait(false);
                return 1;
            }
            await Console.Error.WriteLineAsync($"REFUSED by the replica-SQs (via {report.Via}): {report.Status}").ConfigureAwait(false);
            return 3;
        }
        catch (DeploymentException e)
        {
            await Console.Error.WriteLineAsync($"error: {e.Message}").ConfigureAwait(false);
            return 1;
        }
    }
}
