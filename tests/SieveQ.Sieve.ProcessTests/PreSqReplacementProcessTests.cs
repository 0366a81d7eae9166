using System.Diagnostics;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A pre-SQ replaced through `sieveq admin pre-sq replace` while a sender sends, all real processes: the controller
/// owns the pre-SQ processes (as under `sieveq up`: a launch plan, and each pre-SQ started by StartPreSq), stops the
/// one named and starts a fresh process with the same id; every message is delivered exactly once, in order.
/// </summary>
public sealed class PreSqReplacementProcessTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(3);

    [Fact]
    public async Task Replacing_each_pre_sq_through_the_admin_command_while_a_sender_sends_loses_and_duplicates_nothing()
    {
        await using var controller = new ControllerOwner(output);
        await using var d = await SieveDeployment.StartAsync(senders: [1], startedElsewhere: controller.HostAsync);
        output.WriteLine($"deployment in {d.Directory}");
        var admin = ControllerConfig.LocalKeyFile(d.Config, ManagementRole.Administrator);

        var receiver = d.Receiver();
        var log = new DeliveryLog();
        var expected = new Dictionary<int, int> { [1] = 80 };
        var reading = log.ReadUntilAsync(receiver, expected, Bound);
        // What this test holds the replacement to is no loss and no duplicate, not the SDK's default 30 s of patience: each
        // replacement takes several seconds, and more on a loaded machine.
        var sender = d.Sender(1, new SieveQ.Sdk.Sender.SieveQSenderOptions { UnavailableAfter = Bound });
        var clock = Stopwatch.StartNew();
        var replacements = new List<Task<(int Code, string Output)>>();
        // Each pre-SQ is replaced in turn while messages keep flowing: the sender's traffic moves to the other one
        // and comes back, and nothing it was told was taken may be lost.
        var duringReplacement = 0;
        await Traffic.SendAsync(sender, 80, Bound, onEach: async i =>
        {
            // Paced (about 8 s in all), so that the replacements, each several seconds, happen while messages flow.
            await Task.Delay(100);
            if (replacements.Count > 0 && !replacements[^1].IsCompleted)
            {
                duringReplacement++;
            }
            if (i is 15 or 45)
            {
                if (replacements.Count > 0)
                {
                    await replacements[^1];
                }
                var preSq = d.PreSqIds[replacements.Count];
                replacements.Add(AdminProcess.RunAsync(["admin", "pre-sq", "replace", "--id", preSq.ToString(System.Globalization.CultureInfo.InvariantCulture),
                    "--reason", "process test", "--deployment", d.Directory, "--key", admin]));
            }
        });
        output.WriteLine($"{duringReplacement} messages sent while a replacement was under way; all 80 acknowledged after {clock.Elapsed.TotalSeconds:0.0} s");
        Assert.True(duringReplacement >= 10, $"only {duringReplacement} messages were sent during the replacements");
        foreach (var r in replacements)
        {
            var (code, text) = await r;
            output.WriteLine(text);
            Assert.True(code == 0, text);
            Assert.Contains("done (audit record", text, StringComparison.Ordinal);
        }
        await reading;
        log.AssertExactlyOnceInOrder(expected);

        var audit = await AdminProcess.RunAsync(["admin", "audit", "--count", "40", "--deployment", d.Directory, "--key", admin]);
        output.WriteLine(audit.Output);
        foreach (var id in d.PreSqIds)
        {
            Assert.Contains($"replace-pre-sq pre-SQ {id} (reason: process test): replaced: started pid ", audit.Output, StringComparison.Ordinal);
        }
        d.Passed = true;
    }
}

/// <summary>`dotnet sieveq.dll ...` as a process: the CLI exactly as an operator runs it.</summary>
internal static class AdminProcess
{
    public static ProcessStartInfo Command(IReadOnlyList<string> args)
    {
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false };
        psi.ArgumentList.Add(SieveDeployment.SieveqDll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        return psi;
    }

    public static async Task<(int Code, string Output)> RunAsync(IReadOnlyList<string> args, TimeSpan? limit = null)
    {
        var psi = Command(args);
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        using var p = Process.Start(psi)!;
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEndAsync();
        using var cts = new CancellationTokenSource(limit ?? TimeSpan.FromMinutes(2));
        await p.WaitForExitAsync(cts.Token);
        return (p.ExitCode, await stdout + await stderr);
    }
}
