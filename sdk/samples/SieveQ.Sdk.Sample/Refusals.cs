using SieveQ.Sdk.Sender;

namespace SieveQ.Sdk.Sample;

/// <summary>
/// Sends the deployment would drop, refused by the SDK at the call (nothing is numbered or sent): a payload above
/// the route's limit, and a receiver nobody enrolled.
/// </summary>
internal static class Refusals
{
    /// <summary>An id no deployment made by the sample's check enrols.</summary>
    private const int StrangerReceiver = 999_999;

    public static async Task ShowAsync(SieveQSender sender, int receiver, IReadOnlyList<RouteSettings>? routes)
    {
        var route = routes?.FirstOrDefault(r => r.Sender == sender.Id && r.Receiver == receiver);
        if (route is null)
        {
            Console.WriteLine("refusals: no routes in the settings, so the SDK cannot check sizes up front");
        }
        else
        {
            await TryAsync(sender, receiver, new byte[route.MaxBytes + 1]).ConfigureAwait(false);
        }
        await TryAsync(sender, StrangerReceiver, "hello"u8.ToArray()).ConfigureAwait(false);
    }

    private static async Task TryAsync(SieveQSender sender, int receiver, byte[] data)
    {
        try
        {
            var seq = await sender.SendAsync(receiver, data).ConfigureAwait(false);
            throw new InvalidOperationException($"the SDK accepted {data.Length} bytes for receiver {receiver} as message {seq}; expected a refusal");
        }
        catch (SendRefusedException e)
        {
            var limit = e.Reason == SendRefusal.TooLarge ? $" (limit {e.Limit} bytes)" : "";
            Console.WriteLine($"refused: {e.Reason}{limit} for receiver {e.Receiver}: {e.Message}");
        }
    }
}
