using System.Diagnostics;
using System.Security.Cryptography;
using System.Text;
using Google.Protobuf;
using Microsoft.Extensions.Logging;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Transport;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// Holds a sender's or receiver's id lease for one process run: takes it before the party opens anything, renews it
/// every third of its term through any pre-SQ, and lets it go on dispose. The replicas decide every request in agreed
/// execution; the answer comes back as the result f+1 of them agreed on. A renewal that finds another holder (this run
/// could not renew for a whole term) calls <see cref="Lost"/>, and the party stops.
/// </summary>
internal sealed class IdLeaseKeeper : IAsyncDisposable
{
    private static readonly TimeSpan CallTimeout = TimeSpan.FromSeconds(10);

    /// <summary>Taken off the term when this run judges its own lease: the replicas' clock may run ahead of this host's by up to the ordering's skew.</summary>
    public const long SafetyMarginMs = 3_000;

    private readonly LeaseParty _party;
    private readonly int _id;
    private readonly ECDsa _signing;
    private readonly (int Id, GrpcChannel Channel)[] _preSqs;
    private readonly byte[] _holder;
    private readonly string _label;
    private readonly ILogger _log;
    private readonly CancellationTokenSource _stop = new();
    private readonly Func<long> _monotonicMs;
    private Task _renewing = Task.CompletedTask;
    private long _lastRequestMs;
    private long _validUntil;
    private int _next;

    private IdLeaseKeeper(LeaseParty party, int id, ECDsa signing, SieveQClientConfiguration config, string stateDir, ILogger log, Func<long> monotonicMs)
    {
        _monotonicMs = monotonicMs;
        _party = party;
        _id = id;
        _signing = signing;
        _log = log;
        _preSqs = config.PreSqs.OrderBy(p => p.Key).Select(p => (p.Key, GrpcChannel.ForAddress(p.Value, config.PreSqTlsPins.GetValueOrDefault(p.Key)))).ToArray();
        _next = (int)((uint)id % (uint)_preSqs.Length);
        _label = Label(stateDir);
        _holder = HolderId(party, id, stateDir);
    }

    /// <summary>
    /// The same for every run on one host and state folder: a run that crashed without letting its lease go is followed
    /// by one that takes it back at once (two live processes on one state folder are kept apart by its exclusive files),
    /// while a process elsewhere, or on another folder, is refused until the lease lapses.
    /// </summary>
    private static byte[] HolderId(LeaseParty party, int id, string stateDir)
    {
        var text = $"SIEVEQ/ID-LEASE-HOLDER/v1|{Environment.MachineName}|{party}|{id}|{Path.GetFullPath(stateDir)}";
        return SHA256.HashData(Encoding.UTF8.GetBytes(text))[..IdLeaseCodec.HolderBytes];
    }

    private string Name => _party == LeaseParty.Sender ? PartyKeyNames.Sender : PartyKeyNames.Receiver;

    /// <summary>Set by the party: called once if the lease turns out taken by another holder.</summary>
    public Action<IdHeldException>? Lost { get; set; }

    /// <summary>For a sender: the highest sequence number the replicas had taken from the id when the lease was granted.</summary>
    public long SequenceFloor { get; private set; }

    /// <summary>
    /// Whether this run may act under the id now: a grant counts from when its request left, for the term less
    /// <see cref="SafetyMarginMs"/>, so the run stops sending before the replicas could give the id to another process
    /// (a run cut off from every pre-SQ pauses; it resumes when a renewal is granted, or stops when the id was taken).
    /// </summary>
    public bool Valid => _monotonicMs() < Volatile.Read(ref _validUntil);

    /// <summary>What this run calls itself in the lease (shown to a second holder).</summary>
    public string Holder => _label;

    /// <summary>Takes the lease, or throws: <see cref="IdHeldException"/>, <see cref="SieveQConfigurationException"/> (refused), <see cref="ConnectUnconfirmedException"/> (no pre-SQ answered).</summary>
    public static async Task<IdLeaseKeeper> AcquireAsync(SieveQClientConfiguration config, string party, int id, string stateDir, ILogger log, CancellationToken ct,
        Func<long>? monotonicMs = null)
    {
        var signing = config.Keys.OpenSigningKey(config.SigningKeyName(party, id));
        var keeper = new IdLeaseKeeper(party == PartyKeyNames.Sender ? LeaseParty.Sender : LeaseParty.Receiver, id, signing, config, stateDir, log,
            monotonicMs ?? (() => Clock.MonotonicMs));
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(ct);
            deadline.CancelAfter(config.ConnectTimeout);
            var (result, error) = await keeper.RequestAsync(LeaseOp.Hold, deadline.Token).ConfigureAwait(false);
            ct.ThrowIfCancellationRequested();
            if (result is null)
            {
                throw new ConnectUnconfirmedException($"{party} {id}", "its id lease", 0, 0, 1, config.ConnectTimeout, error);
            }
            keeper.ThrowUnlessGranted(result);
            keeper.SequenceFloor = result.SequenceFloor;
            log.LogInformation("{Party} {Id}: id lease held as {Holder}", party, id, keeper._label);
            keeper._renewing = Task.Run(() => keeper.RenewAsync(keeper._stop.Token));
            return keeper;
        }
        catch
        {
            await keeper.DisposeChannelsAsync().ConfigureAwait(false);
            throw;
        }
    }

    private void ThrowUnlessGranted(IdLeaseResult result)
    {
        switch (result.Outcome)
        {
            case LeaseOutcome.Granted:
                return;
            case LeaseOutcome.HeldByOther:
                throw Held(result);
            default:
                throw new SieveQConfigurationException($"{Name} {_id}: the id lease was refused: {result.Reason}");
        }
    }

    private IdHeldException Held(IdLeaseResult result) =>
        new(Name, _id, result.Label, TimeSpan.FromMilliseconds(Math.Max(0, result.ExpiresAtMs - DateTimeOffset.UtcNow.ToUnixTimeMilliseconds())));

    private async Task RenewAsync(CancellationToken stop)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(IdLeaseTable.TermMs / 3));
        try
        {
            while (await timer.WaitForNextTickAsync(stop).ConfigureAwait(false))
            {
                IdLeaseResult? result;
                string? error;
                using (var tick = CancellationTokenSource.CreateLinkedTokenSource(stop))
                {
                    tick.CancelAfter(TimeSpan.FromMilliseconds(IdLeaseTable.TermMs / 3));
                    (result, error) = await RequestAsync(LeaseOp.Hold, tick.Token).ConfigureAwait(false);
                }
                stop.ThrowIfCancellationRequested();
                if (result is null)
                {
                    if (!Valid)
                    {
                        _log.LogWarning("{Party} {Id}: the id lease lapsed here ({Reason}): sending is paused until it is renewed", Name, _id, error);
                    }
                    _log.LogWarning("{Party} {Id}: the id lease could not be renewed: {Reason}; trying again in {Seconds} s", Name, _id, error, IdLeaseTable.TermMs / 3000);
                    continue;
                }
                if (result.Outcome == LeaseOutcome.HeldByOther)
                {
                    var held = Held(result);
                    _log.LogError("{Party} {Id}: the id lease was taken by another process while this one could not renew it: {Holder}; stopping", Name, _id, result.Label);
                    Lost?.Invoke(held);
                    return;
                }
                if (result.Outcome != LeaseOutcome.Granted)
                {
                    _log.LogWarning("{Party} {Id}: the id lease renewal was refused: {Reason}", Name, _id, result.Reason);
                }
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // disposed
        }
    }

    /// <summary>Asks the pre-SQs in turn until one answers with an agreed result; null and the last error when none did before <paramref name="ct"/>.</summary>
    private async Task<(IdLeaseResult? Result, string? Error)> RequestAsync(LeaseOp op, CancellationToken ct)
    {
        string? error = null;
        var backoff = TimeSpan.FromMilliseconds(200);
        while (!ct.IsCancellationRequested)
        {
            var sentAt = _monotonicMs();
            // Growing per request, even within one millisecond: the replicas refuse a holder's request at or before its last.
            var at = Math.Max(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), _lastRequestMs + 1);
            _lastRequestMs = at;
            var request = IdLeaseCodec.EncodeRequest(_party, _id, op, _holder, _label, at, _signing);
            for (var attempt = 0; attempt < _preSqs.Length && !ct.IsCancellationRequested; attempt++)
            {
                var (preSq, channel) = _preSqs[_next];
                try
                {
                    using var call = CancellationTokenSource.CreateLinkedTokenSource(ct);
                    call.CancelAfter(CallTimeout);
                    var reply = await channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.SubmitIdLease,
                        new IdLeaseSubmission { Canonical = UnsafeByteOperations.UnsafeWrap(request) }, IdLeaseOutcome.Parser, call.Token).ConfigureAwait(false);
                    var result = IdLeaseCodec.DecodeResult(reply.Canonical.Memory);
                    if (result.Party == _party && result.Id == _id)
                    {
                        if (op == LeaseOp.Hold && result.Outcome == LeaseOutcome.Granted)
                        {
                            Volatile.Write(ref _validUntil, sentAt + IdLeaseTable.TermMs - SafetyMarginMs);
                        }
                        return (result, null);
                    }
                    error = $"pre-SQ {preSq}: a result for another id";
                }
                catch (OperationCanceledException) when (ct.IsCancellationRequested)
                {
                    break;
                }
                catch (GrpcCallException e) when (e.Status is GrpcStatusCode.PermissionDenied or GrpcStatusCode.Unauthenticated)
                {
                    // The pre-SQ's own checks: not enrolled, or not this id's key. The replicas would say the same.
                    return (new IdLeaseResult(LeaseOutcome.Refused, _party, _id, 0, ReadOnlyMemory<byte>.Empty, "", e.Message), null);
                }
#pragma warning disable CA1031 // a pre-SQ that cannot answer is skipped; the next one is tried
                catch (Exception e)
#pragma warning restore CA1031
                {
                    error = $"pre-SQ {preSq}: {e.Message}";
                }
                _next = (_next + 1) % _preSqs.Length;
            }
            try
            {
                await Task.Delay(backoff, ct).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                break;
            }
            backoff = TimeSpan.FromTicks(Math.Min(backoff.Ticks * 2, TimeSpan.FromSeconds(2).Ticks));
        }
        return (null, error ?? "no answer in time");
    }

    /// <summary>"host pid 1234 program, state /var/lib/app": at most the lease's label bytes, cut from the end of the folder.</summary>
    private static string Label(string stateDir)
    {
        string program;
        using (var self = Process.GetCurrentProcess())
        {
            program = self.ProcessName;
        }
        var text = $"{Environment.MachineName} pid {Environment.ProcessId} {program}, state {Path.GetFullPath(stateDir)}";
        text = new string(text.Select(c => char.IsControl(c) ? '?' : c).ToArray());
        while (Encoding.UTF8.GetByteCount(text) > IdLeaseCodec.MaxLabelBytes)
        {
            text = text[..^1];
        }
        return text;
    }

    /// <summary>Stops renewing and lets the lease go (best effort, a few seconds at most), so the next holder need not wait for the term.</summary>
    public async ValueTask DisposeAsync()
    {
        if (_stop.IsCancellationRequested)
        {
            return;
        }
        await _stop.CancelAsync().ConfigureAwait(false);
        await _renewing.ConfigureAwait(false);
        Volatile.Write(ref _validUntil, long.MinValue);
        using (var release = new CancellationTokenSource(TimeSpan.FromSeconds(3)))
        {
            var (result, error) = await RequestAsync(LeaseOp.Release, release.Token).ConfigureAwait(false);
            if (result is null)
            {
                _log.LogWarning("{Party} {Id}: the id lease could not be released ({Reason}); it lapses in {Seconds} s", Name, _id, error, IdLeaseTable.TermMs / 1000);
            }
        }
        await DisposeChannelsAsync().ConfigureAwait(false);
    }

    /// <summary>Stops renewing without letting the lease go: for a run that could not open its state, whose holder id another live run on the same folder shares.</summary>
    public async ValueTask AbandonAsync()
    {
        if (!_stop.IsCancellationRequested)
        {
            await _stop.CancelAsync().ConfigureAwait(false);
            await _renewing.ConfigureAwait(false);
            await DisposeChannelsAsync().ConfigureAwait(false);
        }
    }

    private ValueTask DisposeChannelsAsync()
    {
        foreach (var (_, channel) in _preSqs)
        {
            channel.Dispose();
        }
        _signing.Dispose();
        _stop.Dispose();
        return ValueTask.CompletedTask;
    }
}
