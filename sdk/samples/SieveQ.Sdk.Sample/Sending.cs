using SieveQ.Sdk.Sender;

namespace SieveQ.Sdk.Sample;

/// <summary>
/// Sending through an outage: <see cref="SieveQUnavailableException"/> means no room opened in the window or the
/// outbox for a while (the message was not numbered), or no acknowledgement came; the application decides to wait on.
/// </summary>
internal static class Sending
{
    public static async Task<long> SendAsync(SieveQSender sender, int receiver, byte[] data, CancellationToken ct)
    {
        while (true)
        {
            try
            {
                return await sender.SendAsync(receiver, data, ct).ConfigureAwait(false);
            }
            catch (SieveQUnavailableException e)
            {
                Console.WriteLine($"unavailable, sending again: {e.Message}");
            }
        }
    }

    public static async Task WaitAcknowledgedAsync(SieveQSender sender, long seq, CancellationToken ct)
    {
        while (true)
        {
            try
            {
                await sender.WaitAcknowledgedAsync(seq, ct).ConfigureAwait(false);
                return;
            }
            catch (SieveQUnavailableException e)
            {
                Console.WriteLine($"unavailable, still waiting for acknowledgements (they stay in the outbox): {e.Message}");
            }
        }
    }
}
