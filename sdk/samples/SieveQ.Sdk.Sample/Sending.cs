using SieveQ.Sdk.Sender;

namespace SieveQ.Sdk.Sample;

/// <summary>
/// The application's sender through outages. <see cref="SieveQUnavailableException"/> from <c>SendAsync</c> means no
/// room opened in the window or the outbox for a while (the message was not numbered: send it again); from
/// <c>WaitAcknowledgedAsync</c>, that no acknowledgement came. A sender that stays without acknowledgements after the
/// deployment restarted is replaced by a new one on the same state folder, which sends the outbox again with the
/// original numbers (the replicas drop what they already have). The replacement uses Create, not ConnectAsync: the
/// deployment may still be away, and the first sender's check already held.
/// </summary>
internal sealed class Sending(SieveQClientConfiguration clients, int senderId, string stateDir, SieveQSender first) : IAsyncDisposable
{
    private SieveQSender _sender = first;

    public SieveQSender Current => _sender;

    /// <summary>How many times the sender was replaced after acknowledgements stopped.</summary>
    public int Recreated { get; private set; }

    /// <summary>Reconnects to pre-SQs over every sender this run used.</summary>
    public long Reconnects => _reconnectsOfReplaced + _sender.Stats.Reconnects;

    private long _reconnectsOfReplaced;

    public async Task<long> SendAsync(int receiver, byte[] data, CancellationToken ct)
    {
        while (true)
        {
            try
            {
                return await _sender.SendAsync(receiver, data, ct).ConfigureAwait(false);
            }
            catch (SieveQUnavailableException e)
            {
                Console.WriteLine($"unavailable, sending again: {e.Message}");
            }
        }
    }

    public async Task WaitAcknowledgedAsync(long seq, CancellationToken ct)
    {
        while (true)
        {
            try
            {
                await _sender.WaitAcknowledgedAsync(seq, ct).ConfigureAwait(false);
                return;
            }
            catch (SieveQUnavailableException e)
            {
                Console.WriteLine($"unavailable: {e.Message}; replacing the sender, its outbox is sent again");
                await _sender.DisposeAsync().ConfigureAwait(false);
                _reconnectsOfReplaced += _sender.Stats.Reconnects;
                _sender = SieveQSender.Create(clients, senderId, stateDir);
                Recreated++;
            }
        }
    }

    public ValueTask DisposeAsync() => _sender.DisposeAsync();
}
