using System.CommandLine;
using System.Globalization;
using System.Text.Json;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq deploy init` (a whole local deployment in one directory), `sieveq keys create|show` (an
/// endpoint's own key pair, private half never leaves its store) and `sieveq enrol` (the controller
/// adds an endpoint's public keys to the enrolment).
/// </summary>
internal static class DeployCommands
{
    private static readonly JsonSerializerOptions Indented = new() { WriteIndented = true, PropertyNamingPolicy = JsonNamingPolicy.CamelCase };

    public static IEnumerable<Command> Build() => [BuildDeploy(), BuildKeys(), BuildEnrol()];

    private static Command BuildDeploy()
    {
        var dir = DeploymentOption.Required("Directory for deployment.json, cluster.json, enrolment.json and keys/.");
        var f = new Option<int>("--f") { Description = "Faults tolerated; 3f+1 replica-SQs.", DefaultValueFactory = _ => 1 };
        var preSqs = new Option<int>("--pre-sqs") { Description = "Number of pre-SQ gateways.", DefaultValueFactory = _ => 2 };
        var senders = new Option<string>("--senders") { Description = "Sender ids, comma-separated.", DefaultValueFactory = _ => "1,2" };
        var receivers = new Option<string>("--receivers") { Description = "Receiver ids, comma-separated.", DefaultValueFactory = _ => "100" };
        var basePort = new Option<int>("--base-port") { Description = "Replica links on base+i, replica APIs on base+100+i, pre-SQs on base+200+j (0: pick free ports).", DefaultValueFactory = _ => 0 };
        var durability = new Option<bool>("--no-durability") { Description = "Turn the replicas' write-ahead log off." };
        var rules = new Option<FileInfo?>("--rules")
        {
            Description = "Initial rule set (JSON): the replicas run signed rule sets instead of fixed routes. It is copied to rules/initial.json and signed with the administrator key.",
        };
        var adminKey = new Option<FileInfo?>("--admin-key")
        {
            Description = "Administrator private key (PEM, ECDSA P-256) to pin and sign with; default: a new one in keys/administrator.pem. Pinned for rule sets, enrolment and route changes.",
        };
        var init = new Command("init", "Create a complete local deployment (keys for every party, enrolment, every endpoint on loopback).")
        {
            dir, f, preSqs, senders, receivers, basePort, durability, rules, adminKey,
        };
        init.SetAction(parse =>
        {
            var d = parse.GetValue(dir)!.FullName;
            if (File.Exists(Path.Combine(d, DeploymentFile.FileName)))
            {
                Console.Error.WriteLine($"{d} already holds a deployment; refusing to overwrite its keys");
                return 1;
            }
            var spec = new LocalDeploymentSpec
            {
                F = parse.GetValue(f),
                PreSqs = parse.GetValue(preSqs),
                Senders = ParseIds(parse.GetValue(senders)!, "--senders"),
                Receivers = ParseIds(parse.GetValue(receivers)!, "--receivers"),
                Durability = !parse.GetValue(durability),
                RuleSet = parse.GetValue(rules) is { } r ? File.ReadAllBytes(r.FullName) : null,
                AdministratorKeyPem = parse.GetValue(adminKey) is { } k ? File.ReadAllText(k.FullName) : null,
            };
            if (spec.F is < 0 or > 10 || spec.PreSqs is < 1 or > 16)
            {
                Console.Error.WriteLine("--f must be 0..10 and --pre-sqs 1..16");
                return 2;
            }
            var port = parse.GetValue(basePort);
            spec = spec with { BasePort = port > 0 ? port : PortPlan.FindFreeBase(3 * spec.F + 1, spec.PreSqs) };
            DeploymentConfig cfg;
            try
            {
                cfg = DeploymentBootstrap.Create(d, spec);
            }
            catch (DeploymentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 1;
            }
            PrintEndpoints(cfg);
            var where = spec.AdministratorKeyPem is null ? $" in {Path.Combine(d, "keys", DeploymentRules.AdministratorKeyName + ".pem")}" : "";
            if (cfg.Rules is { } pinned)
            {
                Console.WriteLine($"  rules: {cfg.Resolve(pinned.File)} (signed); administrator key {DeploymentRules.Administrator(pinned).KeyId}{where}");
            }
            else if (DeploymentRules.PinnedAdministrator(cfg) is { } admin)
            {
                Console.WriteLine($"  routes: fixed ({cfg.Routes.Count}), changed through the ordering with `sieveq route`; administrator key {admin.KeyId}{where}");
            }
            return 0;
        });
        var deploy = new Command("deploy", "Deployment files.");
        deploy.Subcommands.Add(init);
        return deploy;
    }

    public static void PrintEndpoints(DeploymentConfig cfg)
    {
        Console.WriteLine($"deployment {Path.Combine(cfg.BaseDirectory, DeploymentFile.FileName)}: f={cfg.F}, {cfg.N} replica-SQs, {cfg.PreSqs.Count} pre-SQs, {cfg.Agents.Count} agent(s)");
        foreach (var r in cfg.Replicas)
        {
            Console.WriteLine($"  {r.Name,-14} api {r.ApiUrl}");
        }
        foreach (var p in cfg.PreSqs)
        {
            Console.WriteLine($"  {p.Name,-14} {p.Url}");
        }
        foreach (var a in cfg.Agents)
        {
            Console.WriteLine($"  agent {a.Name,-8} unix:{cfg.Resolve(a.Socket)} (senders {string.Join(',', a.Senders)}; receivers {string.Join(',', a.Receivers)})");
        }
    }

    internal static IReadOnlyList<int> ParseIds(string text, string option)
    {
        var ids = new List<int>();
        foreach (var part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!int.TryParse(part, NumberStyles.None, CultureInfo.InvariantCulture, out var id) || ids.Contains(id))
            {
                throw new ArgumentException($"{option}: '{part}' is not a new non-negative id");
            }
            ids.Add(id);
        }
        return ids.Count > 0 ? ids : throw new ArgumentException($"{option}: at least one id");
    }

    private static Command BuildKeys()
    {
        var store = new Option<DirectoryInfo>("--store") { Description = "Key directory (PEM files, owner-only).", Required = true };
        var name = new Option<string>("--name") { Description = "Endpoint name (letters, digits, '-', '_', '.').", Required = true };
        var output = new Option<FileInfo?>("--out") { Description = "Also write the enrolment request (public keys, JSON) to this file." };
        var create = new Command("create", "Create an endpoint's signing and key-agreement key pairs and print its enrolment request.") { store, name, output };
        create.SetAction(parse => Run(() =>
        {
            var s = new PemFileKeyStore(parse.GetValue(store)!.FullName);
            var n = parse.GetValue(name)!;
            if (s.Exists(n + "-sign") || s.Exists(n + "-agree"))
            {
                throw new KeyStoreException($"keys for '{n}' exist; refusing to replace them");
            }
            Directory.CreateDirectory(parse.GetValue(store)!.FullName);
            s.GetOrCreateSigningKey(n + "-sign").Dispose();
            s.GetOrCreateAgreementKey(n + "-agree").Dispose();
            return Request(s, n, parse.GetValue(output));
        }));
        var show = new Command("show", "Print an endpoint's enrolment request (public keys only).") { store, name, output };
        show.SetAction(parse => Run(() => Request(new PemFileKeyStore(parse.GetValue(store)!.FullName), parse.GetValue(name)!, parse.GetValue(output))));
        var keys = new Command("keys", "An endpoint's own keys (ECDSA P-256 signing, ECDH P-256 agreement; CNG/TPM on Windows, PEM 0600 elsewhere).");
        keys.Subcommands.Add(create);
        keys.Subcommands.Add(show);
        return keys;
    }

    private static int Request(PemFileKeyStore store, string name, FileInfo? output)
    {
        var request = new EnrolmentRequest(name, store.ExportPublicKey(name + "-sign"), store.ExportPublicKey(name + "-agree"));
        var json = JsonSerializer.Serialize(request, Indented);
        Console.WriteLine(json);
        if (output is not null)
        {
            File.WriteAllText(output.FullName, json);
        }
        return 0;
    }

    private static Command BuildEnrol()
    {
        var enrolment = new Option<FileInfo>("--enrolment") { Description = "The enrolment file to update (created if absent, needs --f).", Required = true };
        var request = new Option<FileInfo>("--request") { Description = "Enrolment request written by `sieveq keys create --out`.", Required = true };
        var role = new Option<string>("--role") { Description = "sender, receiver, pre-sq or replica.", Required = true };
        role.AcceptOnlyFromAmong("sender", "receiver", "pre-sq", "replica");
        var id = new Option<int>("--id") { Description = "The endpoint's id.", Required = true };
        var f = new Option<int>("--f") { Description = "f for a new enrolment file.", DefaultValueFactory = _ => 1 };
        var cmd = new Command("enrol", "Add an endpoint's public keys to the enrolment file (read at start); `enrol request|sender|revoke` change senders through the ordering instead, without restart.")
        {
            enrolment, request, role, id, f,
        };
        foreach (var sub in EnrolCommands.Build())
        {
            cmd.Subcommands.Add(sub);
        }
        cmd.SetAction(parse => Run(() =>
        {
            var file = parse.GetValue(enrolment)!.FullName;
            var req = JsonSerializer.Deserialize<EnrolmentRequest>(File.ReadAllText(parse.GetValue(request)!.FullName), Indented)
                ?? throw new FormatException("empty enrolment request");
            if (req.Name is null || req.SignaturePublicKey is null || req.AgreementPublicKey is null)
            {
                throw new FormatException("enrolment request needs name, signaturePublicKey and agreementPublicKey");
            }
            var current = File.Exists(file) ? Enrolment.ParseWithoutValidation(File.ReadAllText(file)) : new Enrolment(parse.GetValue(f), [], [], [], []);
            if (current.Senders is null || current.Receivers is null || current.PreSqs is null || current.Replicas is null)
            {
                throw new FormatException($"{file}: enrolment needs all four lists");
            }
            var n = parse.GetValue(id);
            var updated = parse.GetValue(role) switch
            {
                "sender" => current with { Senders = [.. current.Senders, new EnrolledSender(n, req.Name, req.SignaturePublicKey, req.AgreementPublicKey)] },
                "receiver" => current with { Receivers = [.. current.Receivers, new EnrolledReceiver(n, req.Name, req.SignaturePublicKey, req.AgreementPublicKey)] },
                "pre-sq" => current with { PreSqs = [.. current.PreSqs, new EnrolledPreSq(n, req.Name, req.AgreementPublicKey)] },
                _ => current with { Replicas = [.. current.Replicas, new EnrolledReplica(n, req.Name, req.AgreementPublicKey)] },
            };
            ValidatePartial(updated);
            ECDiffieHellmanProbe(req.AgreementPublicKey).Dispose();
            var tmp = file + ".tmp";
            File.WriteAllText(tmp, updated.ToJson());
            File.Move(tmp, file, overwrite: true);
            Console.WriteLine($"enrolled {parse.GetValue(role)} {n} ({req.Name}) in {file}: {updated.Senders.Count} senders, {updated.Receivers.Count} receivers, {updated.PreSqs.Count} pre-SQs, {updated.Replicas.Count}/{updated.ReplicaCount} replicas");
            return 0;
        }));
        return cmd;
    }

    /// <summary>An enrolment being built may not have all its replicas yet; everything else must hold.</summary>
    private static void ValidatePartial(Enrolment e)
    {
        var complete = e with
        {
            Replicas = Enumerable.Range(0, e.ReplicaCount)
                .Select(i => e.Replicas.FirstOrDefault(r => r.Id == i) ?? new EnrolledReplica(i, "pending", [0])).ToList(),
        };
        if (e.Replicas.Any(r => r.Id < 0 || r.Id >= e.ReplicaCount) || e.Replicas.Select(r => r.Id).Distinct().Count() != e.Replicas.Count)
        {
            throw new FormatException($"replica ids must be unique and within 0..{e.ReplicaCount - 1}");
        }
        complete.Validate();
    }

    private static System.Security.Cryptography.ECDiffieHellman ECDiffieHellmanProbe(byte[] spki)
    {
        var k = System.Security.Cryptography.ECDiffieHellman.Create();
        try
        {
            k.ImportSubjectPublicKeyInfo(spki, out _);
            return k;
        }
        catch (System.Security.Cryptography.CryptographicException e)
        {
            k.Dispose();
            throw new FormatException("agreementPublicKey is not a P-256 SubjectPublicKeyInfo", e);
        }
    }

    private static int Run(Func<int> action)
    {
        try
        {
            return action();
        }
        catch (Exception e) when (e is FormatException or KeyStoreException or IOException or JsonException or DeploymentException or ArgumentException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 1;
        }
    }

    private sealed record EnrolmentRequest(string Name, byte[] SignaturePublicKey, byte[] AgreementPublicKey);
}
