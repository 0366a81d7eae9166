using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using SieveQ.Deployment;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A sender in a process of its own (tests/SieveQ.OutboxSender), which a test kills with SIGKILL and starts again
/// on the same state folder. Every "accepted index seq" line it prints goes into <see cref="Accepted"/>: SendAsync
/// had returned for it, so the deployment owes its delivery.
/// </summary>
internal sealed class SenderProcess : IAsyncDisposable
{
    private readonly ComponentProcesses _processes;
    private readonly string _name;
    private readonly TaskCompletionSource _acknowledged = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<int> _started = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private SenderProcess(ComponentProcesses processes, string name, ConcurrentDictionary<int, long> accepted)
    {
        _processes = processes;
        _name = name;
        Accepted = accepted;
    }

    public static string Dll =>
        typeof(SenderProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "OutboxSenderDll").Value!;

    /// <summary>Payload index → sequence number, of every run that shares the dictionary.</summary>
    public ConcurrentDictionary<int, long> Accepted { get; }

    /// <summary>The messages the process found in its outbox when it started (to send again).</summary>
    public Task<int> Started => _started.Task;

    public Task Acknowledged => _acknowledged.Task;

    public static byte[] Payload(int index) =>
        System.Text.Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture, $"outbox message {index} ").PadRight(200, '.'));

    public static SenderProcess Start(SieveDeployment d, string name, int senderId, string stateDir, int first, int count, ConcurrentDictionary<int, long> accepted, int delayMs = 0)
    {
        if (!File.Exists(Dll))
        {
            throw new FileNotFoundException($"build tests/SieveQ.OutboxSender first: {Dll} is missing");
        }
        var processes = new ComponentProcesses(args =>
        {
            var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false };
            psi.ArgumentList.Add(Dll);
            foreach (var a in args)
            {
                psi.ArgumentList.Add(a);
            }
            return psi;
        }, Path.Combine(d.Directory, "logs"));
        var p = new SenderProcess(processes, name, accepted);
        var inv = CultureInfo.InvariantCulture;
        processes.Start(name, [d.Directory, senderId.ToString(inv), stateDir, SieveDeployment.ReceiverId.ToString(inv), first.ToString(inv), count.ToString(inv), delayMs.ToString(inv)], p.OnLine);
        return p;
    }

    private void OnLine(string line)
    {
        var parts = line.Split(' ');
        switch (parts[0])
        {
            case "accepted" when parts.Length == 3:
                Accepted[int.Parse(parts[1], CultureInfo.InvariantCulture)] = long.Parse(parts[2], CultureInfo.InvariantCulture);
                break;
            case "started" when parts.Length == 2:
                _started.TrySetResult(int.Parse(parts[1], CultureInfo.InvariantCulture));
                break;
            case "acknowledged":
                _acknowledged.TrySetResult();
                break;
            default:
                break;
        }
    }

    public async Task WaitAcceptedAsync(int count, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (Accepted.Count < count)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"{_name}: only {Accepted.Count} of {count} messages accepted within {timeout}");
            }
            await Task.Delay(5);
        }
    }

    /// <summary>kill -9: no flush, no goodbye.</summary>
    public Task KillAsync() => _processes.StopAsync(_name, TimeSpan.Zero, kill: true);

    public async ValueTask DisposeAsync() => await _processes.DisposeAsync();
}
