using System.Diagnostics;
using System.Text;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// An operator's quarantine and readmission through the real CLI and controller processes: `sieveq admin quarantine`
/// asks the controller, which signs an administrator command and orders it through a pre-SQ process; the replica-SQ
/// processes then refuse the sender's messages (counted) until `sieveq admin readmit`, after which the sender's
/// retransmissions are delivered exactly once and in order.
/// </summary>
public sealed class AdminQuarantineTests(ITestOutputHelper output)
{
    private static readonly byte[] OpenRules = """
        { "schema": "sieveq-ruleset/v1", "version": 1, "name": "open",
          "rules": [{ "name": "open", "action": "allow", "from": "any", "to": "any" }] }
        """u8.ToArray();

    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(3);

    [Fact]
    public async Task A_sender_quarantined_from_the_cli_is_not_delivered_until_readmitted_and_then_exactly_once()
    {
        await using var d = await SieveDeployment.StartAsync(senders: [1], ruleSet: OpenRules);
        output.WriteLine($"deployment in {d.Directory}");
        using var controller = await StartControllerAsync(d.Directory);
        var operatorKey = ControllerConfig.LocalKeyFile(d.Config, ManagementRole.Operator);

        var receiver = d.Receiver();
        var log = new DeliveryLog();
        var expected = new Dictionary<int, int> { [1] = 20 };
        var reading = log.ReadUntilAsync(receiver, expected, Bound);
        var sender = d.Sender(1);
        await Traffic.SendAsync(sender, 5, Bound);
        await EventuallyAsync(() => log.Count == 5, "the first five messages delivered");

        var quarantine = await AdminAsync("quarantine", operatorKey, d.Directory);
        Assert.True(quarantine.Code == 0, quarantine.Output);
        Assert.Contains("applied (audit record", quarantine.Output, StringComparison.Ordinal);
        Assert.Contains("quarantine sender 1: applied", quarantine.Output, StringComparison.Ordinal);

        var sending = Traffic.SendAsync(sender, 15, Bound, first: 5);
        // Every replica refuses and counts them; nothing reaches the receiver.
        foreach (var r in d.Config.Replicas)
        {
            await EventuallyAsync(async () => (await d.ReplicaHealthAsync(r.Id)).Counters.GetValueOrDefault("drop.ReplicaAdmission.AdminQuarantined") > 0,
                $"replica {r.Id} counting the quarantined sender's messages");
        }
        await Task.Delay(TimeSpan.FromSeconds(2));
        Assert.Equal(5, log.Count);
        Assert.False(sending.IsCompleted);

        var readmit = await AdminAsync("readmit", operatorKey, d.Directory);
        Assert.True(readmit.Code == 0, readmit.Output);
        Assert.Contains("readmit sender 1: applied", readmit.Output, StringComparison.Ordinal);
        await sending;
        await reading;
        log.AssertExactlyOnceInOrder(expected);

        var audit = await RunAsync(["admin", "audit", "--deployment", d.Directory, "--key", operatorKey]);
        Assert.Contains("quarantine-sender sender 1 (reason: process test): applied: quarantine sender 1: applied", audit.Output, StringComparison.Ordinal);
        Assert.Contains("readmit-sender sender 1 (reason: process test): applied: readmit sender 1: applied", audit.Output, StringComparison.Ordinal);
        d.Passed = true;
    }

    private static Task<(int Code, string Output)> AdminAsync(string action, string key, string deployment) =>
        RunAsync(["admin", action, "--deployment", deployment, "--key", key, "--sender", "1", "--reason", "process test"]);

    private static ProcessStartInfo Sieveq(IEnumerable<string> args)
    {
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        psi.ArgumentList.Add(SieveDeployment.SieveqDll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        return psi;
    }

    private static async Task<(int Code, string Output)> RunAsync(IEnumerable<string> args)
    {
        using var p = Process.Start(Sieveq(args))!;
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEndAsync();
        using var cts = new CancellationTokenSource(TimeSpan.FromMinutes(1));
        await p.WaitForExitAsync(cts.Token);
        return (p.ExitCode, await stdout + await stderr);
    }

    /// <summary>`sieveq controller --create-local`: with the deployment's administrator key it signs the commands it orders.</summary>
    private async Task<ControllerProcess> StartControllerAsync(string deployment)
    {
        var p = Process.Start(Sieveq(["controller", "--deployment", deployment, "--create-local", "--log-level", "Warning"]))!;
        var text = new StringBuilder();
        var listening = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        p.OutputDataReceived += (_, e) =>
        {
            lock (text)
            {
                text.AppendLine(e.Data);
            }
            if (e.Data?.StartsWith("controller listening on", StringComparison.Ordinal) == true)
            {
                listening.TrySetResult();
            }
        };
        p.ErrorDataReceived += (_, e) =>
        {
            lock (text)
            {
                text.AppendLine(e.Data);
            }
        };
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        await Task.WhenAny(listening.Task, p.WaitForExitAsync(), Task.Delay(TimeSpan.FromMinutes(1)));
        if (!listening.Task.IsCompleted)
        {
            p.Kill(entireProcessTree: true);
            p.Dispose();
            Assert.Fail($"the controller did not start:\n{text}");
        }
        output.WriteLine(text.ToString());
        return new ControllerProcess(p);
    }

    private sealed class ControllerProcess(Process process) : IDisposable
    {
        public void Dispose()
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                process.WaitForExit(10_000);
            }
            process.Dispose();
        }
    }

    private static Task EventuallyAsync(Func<bool> condition, string what) => EventuallyAsync(() => Task.FromResult(condition()), what);

    private static async Task EventuallyAsync(Func<Task<bool>> condition, string what)
    {
        var deadline = Environment.TickCount64 + (long)Bound.TotalMilliseconds;
        while (!await condition())
        {
            Assert.True(Environment.TickCount64 < deadline, $"timed out waiting for {what}");
            await Task.Delay(100);
        }
    }
}
