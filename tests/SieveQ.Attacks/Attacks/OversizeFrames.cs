using System.Buffers.Binary;
using System.Diagnostics;
using Google.Protobuf;
using SieveQ.Attacks.Attacks.Http2;
using SieveQ.Deployment;
using SieveQ.PreSq;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SenderFrame = SieveQ.Protocol.V1.SenderFrame;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// oversize: requests above the first pre-SQ's limits, each on a fresh TLS connection from one of a few loopback
/// sources, in turn: a gRPC message of one byte over the largest the pre-SQ receives, sent whole on Exchange
/// (<c>message</c>); a message prefix declaring 16 MiB (<c>declared</c>); a 64 KiB header value, 8 times the header
/// field limit (<c>headers</c>); a 64 KiB Health request, whose limit is 1 KiB (<c>unary</c>); and a sender frame under
/// the gRPC limit whose DATA claims one byte more than the sieve admits, with sender 3's real MAC (<c>envelope</c>:
/// a compromised sender's, since only the pre-SQ's own checks can refuse it). Each but the last must be refused with a
/// status the client reads (grpc-status, RST_STREAM, GOAWAY, an HTTP status); the last is dropped by the pre-SQ's
/// filter, which says nothing to the sender. Paced at the attack rate, at most <see cref="MaxPerSecond"/> per second
/// (each request is up to 1 MiB), with at most <see cref="Concurrent"/> at once.
/// </summary>
internal sealed class OversizeFrames(int rate) : Attack
{
    public const int MaxPerSecond = 20;
    public const int Concurrent = 8;
    public const int Sources = 4;
    public const int CompromisedSender = 3;
    private static readonly string[] Variants = ["message", "declared", "headers", "unary", "envelope"];
    private static readonly TimeSpan AnswerWait = TimeSpan.FromSeconds(5);
    private static readonly byte[] OverMax = new byte[PreSqHostOptions.DefaultMaxMessageBytes + 1];

    private readonly OutcomeTally _tally = new();
    private readonly int _perSecond = Math.Min(rate, MaxPerSecond);
    private byte[]? _envelope;
    private long _attempts;

    public override string Description =>
        $"requests over the first pre-SQ's limits, {_perSecond}/s in turn: a gRPC message of {OverMax.Length} bytes (limit {PreSqHostOptions.DefaultMaxMessageBytes}), "
        + "a prefix declaring 16 MiB, a 64 KiB header, a 64 KiB Health request (limit 1 KiB), a sender frame whose DATA claims 1 MiB + 1";

    public override string Countermeasure =>
        "the gRPC framing's per-method size limit (ResourceExhausted before the body is buffered), Kestrel's header limits (8 KiB a field, 16 KiB in all), "
        + "the envelope's DATA bound (the filter drops the frame as malformed)";

    public override DeploymentShape Shape => new([CompromisedSender], null, []);

    public override string? Watched => EdgeTarget.FirstPreSqName;

    public override long Applied => Interlocked.Read(ref _attempts);

    public override Task PrepareAsync(AttackTarget target, CancellationToken ct)
    {
        var edge = EdgeTarget.FirstPreSq(target.Config);
        using var keys = target.Context.Keys(PartyRole.Sender, CompromisedSender);
        var region = SenderMessageCodec.EncodeSignedRegion(CompromisedSender, 1, AttackSettings.Receiver, new byte[EnvelopeLimits.MaxDataBytes]);
        var message = SenderMessageCodec.SignSingle(region, keys.Signing!);
        // One byte over the sieve's DATA bound, claimed where the length is: the frame stays under the gRPC limit.
        BinaryPrimitives.WriteInt32LittleEndian(message.AsSpan(SenderMessageCodec.HeaderBytes - 4), EnvelopeLimits.MaxDataBytes + 1);
        var frame = SenderFrameCodec.Encode(edge.Id, message, keys.Ring(MacChannel.SenderPreSq, edge.Id)!);
        _envelope = new SenderFrame { Canonical = ByteString.CopyFrom(frame) }.ToByteArray();
        return Task.CompletedTask;
    }

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        var edge = EdgeTarget.FirstPreSq(target.Config);
        using var slots = new SemaphoreSlim(Concurrent);
        var running = new List<Task>();
        var clock = Stopwatch.StartNew();
        long started = 0;
        try
        {
            while (!stop.IsCancellationRequested)
            {
                var due = (long)(clock.Elapsed.TotalSeconds * _perSecond) + 1;
                if (started >= due)
                {
                    await Task.Delay(5, stop).ConfigureAwait(false);
                    continue;
                }
                await slots.WaitAsync(stop).ConfigureAwait(false);
                var n = started++;
                running.Add(Task.Run(async () =>
                {
                    try
                    {
                        await AttemptAsync(edge, Variants[n % Variants.Length], (int)(n % Sources), stop).ConfigureAwait(false);
                    }
                    finally
                    {
                        slots.Release();
                    }
                }, CancellationToken.None));
                running.RemoveAll(t => t.IsCompleted);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // the window ended
        }
        await Task.WhenAll(running).ConfigureAwait(false);
    }

    /// <summary>One request; counted once it is answered or given up on, so the per-second rate counts whole attempts.</summary>
    private async Task AttemptAsync(EdgeTarget edge, string variant, int source, CancellationToken stop)
    {
        try
        {
            var connection = await edge.OpenAsync(source, stop).ConfigureAwait(false);
            await using (connection.ConfigureAwait(false))
            {
                var outcome = await SendAsync(connection, variant, stop).ConfigureAwait(false);
                if (variant == "envelope")
                {
                    // Dropped by the filter: the sender is told nothing and the stream stays open; the pre-SQ's counter shows it.
                    _tally.Add(outcome is null ? "attacker envelope: sent, no answer (dropped by the filter)" : $"attacker envelope: {outcome.Kind}");
                }
                else if (variant == "headers" && outcome is { ConnectionLost: true, GoAwayCode: null })
                {
                    // Kestrel answers an oversized header block with GOAWAY and closes at once; while the attacker is still
                    // writing CONTINUATION frames the close arrives as a TCP reset, which discards the unread GOAWAY.
                    _tally.Add("attacker headers: connection closed, GOAWAY lost to the reset");
                    _tally.Add("attacker refused by closing the connection");
                }
                else
                {
                    _tally.Add($"attacker {variant}: {outcome?.Kind ?? "no answer"}");
                    _tally.Add(outcome is { Refused: true } ? "attacker refused with a status" : "attacker NOT refused");
                }
                Interlocked.Increment(ref _attempts);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // the window ended mid-attempt: not counted either way
        }
        catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException or System.Security.Authentication.AuthenticationException or ObjectDisposedException)
        {
            _tally.Add($"attacker {variant}: connection failed ({e.GetType().Name})");
            _tally.Add(variant == "headers" ? "attacker refused by closing the connection" : "attacker NOT refused");
            Interlocked.Increment(ref _attempts);
        }
    }

    private async Task<StreamOutcome?> SendAsync(RawHttp2Connection c, string variant, CancellationToken stop)
    {
        switch (variant)
        {
            case "message":
            {
                var id = await c.OpenStreamAsync(EdgeTarget.ExchangePath, endStream: false, track: true, stop).ConfigureAwait(false);
                var answer = c.OutcomeAsync(id, AnswerWait, stop);
                // Sent as a client would, within flow control; the pre-SQ refuses on the prefix, so the rest may not fit.
                _ = await c.SendDataAsync(id, Http2Wire.GrpcMessage((uint)OverMax.Length, OverMax), endStream: true, TimeSpan.FromSeconds(2), stop).ConfigureAwait(false);
                return await answer.ConfigureAwait(false);
            }
            case "declared":
            {
                var id = await c.OpenStreamAsync(EdgeTarget.ExchangePath, endStream: false, track: true, stop).ConfigureAwait(false);
                var answer = c.OutcomeAsync(id, AnswerWait, stop);
                _ = await c.SendDataAsync(id, Http2Wire.GrpcMessage(16u << 20, new byte[1024]), endStream: false, TimeSpan.FromSeconds(2), stop).ConfigureAwait(false);
                return await answer.ConfigureAwait(false);
            }
            case "headers":
            {
                var id = await c.OpenStreamAsync(EdgeTarget.ExchangePath, endStream: true, track: true, stop, [("x-oversize", new string('a', 64 * 1024))]).ConfigureAwait(false);
                return await c.OutcomeAsync(id, AnswerWait, stop).ConfigureAwait(false);
            }
            case "unary":
            {
                var id = await c.OpenStreamAsync(EdgeTarget.HealthPath, endStream: false, track: true, stop).ConfigureAwait(false);
                var answer = c.OutcomeAsync(id, AnswerWait, stop);
                _ = await c.SendDataAsync(id, Http2Wire.GrpcMessage(64 * 1024, new byte[64 * 1024]), endStream: true, TimeSpan.FromSeconds(2), stop).ConfigureAwait(false);
                return await answer.ConfigureAwait(false);
            }
            default:
            {
                var id = await c.OpenStreamAsync(EdgeTarget.ExchangePath, endStream: false, track: true, stop).ConfigureAwait(false);
                var answer = c.OutcomeAsync(id, TimeSpan.FromSeconds(1), stop);
                _ = await c.SendDataAsync(id, Http2Wire.GrpcMessage((uint)_envelope!.Length, _envelope), endStream: false, TimeSpan.FromSeconds(2), stop).ConfigureAwait(false);
                return await answer.ConfigureAwait(false);
            }
        }
    }

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct)
    {
        var edge = EdgeTarget.FirstPreSq(target.Config);
        var figures = new Dictionary<string, long>(_tally.All, StringComparer.Ordinal)
        {
            ["attacker refused with a status"] = _tally["attacker refused with a status"],
            ["attacker NOT refused"] = _tally["attacker NOT refused"],
            ["attacker refused by closing the connection"] = _tally["attacker refused by closing the connection"],
        };
        figures["pre-sq drop.*.Malformed"] = await ComponentCounterAsync(target.Config, edge.Name, ".Malformed", ct).ConfigureAwait(false);
        figures["replica drop.*.Malformed"] = await SumCountersAsync(target.Config, "replica-sq", ".Malformed", ct).ConfigureAwait(false);
        return figures;
    }
}
