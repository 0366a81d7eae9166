using System.CommandLine;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using SieveQ.Sieve.Replica;
using SieveQ.Rules;
using SieveQ.Rules.Document;
using SieveQ.Rules.Evaluation;
using SieveQ.Rules.Samples;
using SieveQ.Rules.Signing;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq rules`: stage (f) rule sets. Check one the way a replica would accept it (signature, schema,
/// references, compilation), dry-run it over sample messages, sign it with the administrator key, and
/// generate the deterministic pattern samples. Pushing to a running deployment goes through the
/// ordering (<see cref="RulesPushCommands"/>).
/// </summary>
internal static class RulesCommands
{
    public static Command Build()
    {
        var rules = new Command("rules", "Application rule sets (stage f): check, dry-run, sign, generate, push, rollback.");
        rules.Subcommands.Add(BuildCheck());
        rules.Subcommands.Add(BuildTest());
        rules.Subcommands.Add(BuildSign());
        rules.Subcommands.Add(BuildGenerate());
        rules.Subcommands.Add(RulesPushCommands.BuildPush());
        rules.Subcommands.Add(RulesPushCommands.BuildRollback());
        return rules;
    }

    private static Option<FileInfo?> SignerOption() =>
        new("--signer") { Description = "The administrator's public key (PEM) the signature must come from." };

    private static Command BuildCheck()
    {
        var file = new Argument<FileInfo>("file") { Description = "Rule set (JSON); its signature is read from FILE.sig." };
        var signer = SignerOption();
        var cmd = new Command("check", "Check a rule set as a replica would: signature over the RFC 8785 form, schema, references, compilation.") { file, signer };
        cmd.SetAction(parse =>
        {
            var path = parse.GetValue(file)!.FullName;
            try
            {
                var pinned = LoadSigner(parse.GetValue(signer));
                var loaded = RuleSetLoader.LoadFile(path, pinned);
                PrintSummary(loaded.Compiled);
                Console.WriteLine(loaded.Signature.Pinned
                    ? $"  signature: valid, pinned administrator key {loaded.Signature.Signer.KeyId}"
                    : $"  signature: valid, by key {loaded.Signature.Signer.KeyId} (NOT pinned: pass --signer to check it is the administrator's key)");
                Console.WriteLine("OK");
                return 0;
            }
            catch (RuleSetException e)
            {
                Console.Error.WriteLine($"REJECTED {Path.GetFileName(path)}: {e.Message}");
                return 1;
            }
        });
        return cmd;
    }

    private static Command BuildTest()
    {
        var file = new Argument<FileInfo>("file") { Description = "Rule set (JSON). Checked against FILE.sig when that exists; an unsigned draft is tested with a warning." };
        var messages = new Option<FileInfo>("--messages")
        {
            Description = "JSON lines: {\"sender\":1,\"receiver\":100,\"time\":\"2026-11-22T10:00:00Z\",\"payload_base64\"|\"payload_text\"|\"payload_hex\":...,"
                + " optional \"expect\":\"allow\"|\"deny\" and \"expect_rule\":NAME}.",
            Required = true,
        };
        var signer = SignerOption();
        var cmd = new Command("test", "Dry run: the verdict and deciding rule for each sample message, in order (rates, flows and quarantine carry state).")
        {
            file, messages, signer,
        };
        cmd.SetAction(parse =>
        {
            var path = parse.GetValue(file)!.FullName;
            CompiledRuleSet compiled;
            try
            {
                var pinned = LoadSigner(parse.GetValue(signer));
                if (File.Exists(path + SignatureSidecar.Extension))
                {
                    compiled = RuleSetLoader.LoadFile(path, pinned).Compiled;
                }
                else
                {
                    Console.Error.WriteLine($"warning: {Path.GetFileName(path)} is unsigned; a replica would refuse it");
                    compiled = RuleSetLoader.CompileUnsigned(File.ReadAllBytes(path));
                }
            }
            catch (RuleSetException e)
            {
                Console.Error.WriteLine($"REJECTED {Path.GetFileName(path)}: {e.Message}");
                return 1;
            }
            return RunSamples(compiled, parse.GetValue(messages)!.FullName);
        });
        return cmd;
    }

    private static int RunSamples(CompiledRuleSet compiled, string samplesPath)
    {
        var evaluator = compiled.CreateEvaluator();
        Console.WriteLine($"rule set {compiled.Document.Name ?? "(unnamed)"} version {compiled.Version}");
        int line = 0, count = 0, allowed = 0, mismatches = 0, bad = 0;
        foreach (var text in File.ReadLines(samplesPath))
        {
            line++;
            if (string.IsNullOrWhiteSpace(text) || text.TrimStart().StartsWith("//", StringComparison.Ordinal))
            {
                continue;
            }
            Sample sample;
            try
            {
                sample = Sample.Parse(text, line);
            }
            catch (FormatException e)
            {
                Console.Error.WriteLine($"line {line}: {e.Message}");
                bad++;
                continue;
            }
            count++;
            var d = evaluator.Decide(new RuleInput(sample.TimeMs, sample.Sender, sample.Seq, sample.Receiver, sample.Payload));
            allowed += d.Allowed ? 1 : 0;
            var mismatch = sample.Expect is { } e2 && (e2 != d.Allowed || (sample.ExpectRule is { } r && r != d.Rule));
            mismatches += mismatch ? 1 : 0;
            var when = DateTimeOffset.FromUnixTimeMilliseconds(sample.TimeMs).ToString("yyyy-MM-ddTHH:mm:ss.fffZ", CultureInfo.InvariantCulture);
            Console.WriteLine($"line {line,4}  {when}  {sample.Sender} -> {sample.Receiver}  {sample.Payload.Length,6} B  {(d.Allowed ? "ALLOW" : "DENY ")} {d.Rule}"
                + (d.Detail is null ? "" : $": {d.Detail}")
                + (mismatch ? $"  <-- MISMATCH: expected {(sample.Expect!.Value ? "allow" : "deny")}{(sample.ExpectRule is null ? "" : " by " + sample.ExpectRule)}" : ""));
        }
        var stats = evaluator.Stats;
        Console.WriteLine($"{count} samples: {allowed} allowed, {count - allowed} denied, {mismatches} not as expected"
            + $"{(bad > 0 ? $", {bad} unreadable lines" : "")}; {stats.Quarantines} quarantines, {stats.TrackedSenders} senders and {stats.TrackedFlows} flows tracked");
        return mismatches == 0 && bad == 0 ? 0 : 1;
    }

    private sealed record Sample(int Sender, int Receiver, long Seq, long TimeMs, byte[] Payload, bool? Expect, string? ExpectRule)
    {
        public static Sample Parse(string text, int line)
        {
            try
            {
                using var doc = JsonDocument.Parse(text);
                var o = doc.RootElement;
                if (o.ValueKind != JsonValueKind.Object)
                {
                    throw new FormatException("not a JSON object");
                }
                var sender = Int(o, "sender");
                var receiver = Int(o, "receiver");
                var seq = o.TryGetProperty("seq", out var s) ? s.GetInt64() : line;
                var time = o.TryGetProperty("time", out var t) ? t : throw new FormatException("\"time\" missing (agreed time: ISO 8601 UTC or Unix milliseconds)");
                var ms = t.ValueKind == JsonValueKind.Number
                    ? t.GetInt64()
                    : DateTimeOffset.Parse(t.GetString()!, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal).ToUnixTimeMilliseconds();
                byte[] payload = o.TryGetProperty("payload_base64", out var b) ? Convert.FromBase64String(b.GetString()!)
                    : o.TryGetProperty("payload_text", out var x) ? Encoding.UTF8.GetBytes(x.GetString()!)
                    : o.TryGetProperty("payload_hex", out var h) ? Convert.FromHexString(h.GetString()!.Replace(" ", "", StringComparison.Ordinal))
                    : throw new FormatException("one of payload_base64, payload_text, payload_hex is needed");
                bool? expect = o.TryGetProperty("expect", out var e) ? e.GetString() switch
                {
                    "allow" => true,
                    "deny" => false,
                    _ => throw new FormatException("\"expect\" is allow or deny"),
                } : null;
                var rule = o.TryGetProperty("expect_rule", out var r) ? r.GetString() : null;
                return new Sample(sender, receiver, seq, ms, payload, expect, rule);
            }
            catch (Exception e) when (e is JsonException or InvalidOperationException or ArgumentException)
            {
                throw new FormatException(e.Message, e);
            }
        }

        private static int Int(JsonElement o, string name) =>
            o.TryGetProperty(name, out var v) && v.TryGetInt32(out var i) && i >= 0 ? i : throw new FormatException($"\"{name}\" must be a non-negative integer");
    }

    private static Command BuildSign()
    {
        var file = new Argument<FileInfo>("file") { Description = "Rule set (JSON) to sign; it must pass the schema and compile." };
        var key = new Option<FileInfo>("--key") { Description = "Administrator private key (PKCS#8 or SEC1 PEM, ECDSA P-256).", Required = true };
        var cmd = new Command("sign", "Sign a rule set's RFC 8785 canonical form; writes FILE.sig.") { file, key };
        cmd.SetAction(parse =>
        {
            var path = parse.GetValue(file)!.FullName;
            var keyFile = parse.GetValue(key)!;
            try
            {
                var json = File.ReadAllBytes(path);
                // Refuse to put the administrator's name under a document a replica would reject anyway.
                var compiled = RuleSetLoader.CompileUnsigned(json);
                WarnIfExposed(keyFile);
                using var ecdsa = ECDsa.Create();
                ecdsa.ImportFromPem(File.ReadAllText(keyFile.FullName));
                var sidecar = RuleSetSigner.Sign(compiled.Document.CanonicalBytes, ecdsa);
                File.WriteAllBytes(path + SignatureSidecar.Extension, sidecar.ToJson());
                Console.WriteLine($"signed {Path.GetFileName(path)} version {compiled.Version} (sha256 {compiled.DigestHex}) with key {SignerKey.Of(ecdsa).KeyId}");
                Console.WriteLine($"wrote {path}{SignatureSidecar.Extension}");
                return 0;
            }
            catch (RuleSetException e)
            {
                Console.Error.WriteLine($"not signed: {e.Message}");
                return 1;
            }
            catch (Exception e) when (e is ArgumentException or CryptographicException)
            {
                Console.Error.WriteLine($"not signed: {keyFile.FullName} holds no usable ECDSA P-256 private key ({e.Message})");
                return 1;
            }
        });
        return cmd;
    }

    private static Command BuildGenerate()
    {
        var patterns = new Option<int>("--patterns") { Description = "Number of literal patterns.", DefaultValueFactory = _ => 1000 };
        var seed = new Option<int>("--seed") { Description = "Generator seed.", DefaultValueFactory = _ => SampleRuleSets.SampleSeed };
        var version = new Option<int>("--version") { Description = "Rule-set version.", DefaultValueFactory = _ => 1 };
        var output = new Option<FileInfo>("--out") { Description = "File to write.", Required = true };
        var cmd = new Command("generate", "Write the deterministic pattern-screening rule set (the shipped samples/patterns-1000.json is --patterns 1000).")
        {
            patterns, seed, version, output,
        };
        cmd.SetAction(parse =>
        {
            var bytes = SampleRuleSets.PatternRuleSet(parse.GetValue(patterns), parse.GetValue(seed), parse.GetValue(version));
            File.WriteAllBytes(parse.GetValue(output)!.FullName, bytes);
            Console.WriteLine($"wrote {parse.GetValue(output)!.FullName} ({bytes.Length} bytes); sign it with `sieveq rules sign FILE --key PEM`");
            return 0;
        });
        return cmd;
    }

    private static SignerKey? LoadSigner(FileInfo? file)
    {
        if (file is null)
        {
            return null;
        }
        try
        {
            return SignerKey.FromPem(File.ReadAllText(file.FullName));
        }
        catch (Exception e) when (e is IOException or CryptographicException or UnauthorizedAccessException)
        {
            throw new RuleSetException(RuleSetErrorKind.Signature, "", $"cannot use {file.FullName} as the administrator key: {e.Message}", e);
        }
    }

    private static void WarnIfExposed(FileInfo key)
    {
        if (!OperatingSystem.IsWindows()
            && (File.GetUnixFileMode(key.FullName) & (UnixFileMode.GroupRead | UnixFileMode.OtherRead | UnixFileMode.GroupWrite | UnixFileMode.OtherWrite)) != 0)
        {
            Console.Error.WriteLine($"warning: {key.FullName} is readable or writable by other users; an administrator key should be mode 0600 (or kept off this host)");
        }
    }

    private static void PrintSummary(CompiledRuleSet c)
    {
        var s = c.Summary;
        Console.WriteLine($"rule set {s.Name ?? "(unnamed)"} version {s.Version} (sha256 {c.DigestHex})");
        Console.WriteLine("  schema: valid against sieveq-ruleset/v1");
        Console.WriteLine($"  compiled: {s.Rules} rules, {s.Senders} senders, {s.Receivers} receivers, {s.Topics} topics, {s.Formats} formats, "
            + $"{s.PatternSets} pattern sets ({s.Literals} literals, {s.Regexes} regexes), {s.Rates} rates, {s.Windows} windows, {s.Flows} flows, "
            + $"quarantine {(s.Quarantine ? "on" : "off")}");
        Console.WriteLine($"  limits: {c.Limits.MaxMessageBytes} bytes per message, {c.Limits.MaxSenders} senders, {c.Limits.MaxFlows} flows tracked");
    }
}
