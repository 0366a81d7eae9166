using System.Text;
using System.Text.Json;
using SieveQ.Sieve.Replica;

namespace SieveQ.Rules.Tests;

/// <summary>A seeded stream of plausible and hostile traffic for the scada sample, in agreed-time order.</summary>
internal static class MessageStream
{
    private static readonly int[] Senders = [1, 2, 3, 100, 300, 7];
    private static readonly int[] Receivers = [1, 2, 3, 100, 200, 300, 9];
    private static readonly string[] Actions = ["select", "operate", "cancel", "read", "reboot"];

    public static List<RuleInput> Generate(int seed, int count)
    {
        var rng = new Random(seed);
        var time = T.At("2026-11-24T09:59:00Z");
        var list = new List<RuleInput>(count);
        for (var i = 0; i < count; i++)
        {
            time += rng.Next(0, 400);
            if (i == count / 2)
            {
                time = T.At("2026-11-28T22:30:00Z"); // into the maintenance window
            }
            var sender = Senders[rng.Next(Senders.Length)];
            var receiver = Receivers[rng.Next(Receivers.Length)];
            byte[] payload = rng.Next(8) switch
            {
                0 or 1 => ModbusRequest(rng),
                2 => ModbusResponse(rng),
                3 or 4 => Command(rng),
                5 => Telemetry(rng),
                6 => Junk(rng),
                _ => Malware(rng),
            };
            // Bias towards the routes the rules know, so most rules are exercised.
            if (rng.Next(3) > 0)
            {
                (sender, receiver) = payload.Length > 0 && payload[0] == (byte)'{'
                    ? (payload.AsSpan().IndexOf("\"tag\""u8) >= 0 ? (300, 200) : (rng.Next(1, 3), 300))
                    : rng.Next(3) == 0 ? (100, rng.Next(1, 4)) : (rng.Next(1, 4), 100);
            }
            list.Add(new RuleInput(time, sender, i + 1, receiver, payload));
        }
        return list;
    }

    private static byte[] ModbusRequest(Random rng)
    {
        var fc = new byte[] { 3, 4, 6, 16, 5 }[rng.Next(5)];
        var addr = fc is 6 or 16 ? rng.Next(390, 430) : rng.Next(0, 1100);
        var n = rng.Next(0, 130);
        byte[] pdu = [1, fc, (byte)(addr >> 8), (byte)addr, (byte)(n >> 8), (byte)n];
        var length = rng.Next(20) == 0 ? rng.Next(0, 10) : pdu.Length;
        return [(byte)rng.Next(256), (byte)rng.Next(256), 0, 0, (byte)(length >> 8), (byte)length, .. pdu];
    }

    private static byte[] ModbusResponse(Random rng)
    {
        var n = rng.Next(1, 30);
        var pdu = new byte[3 + n];
        pdu[0] = 1;
        pdu[1] = new byte[] { 3, 4, 6, 16, 131, 7 }[rng.Next(6)];
        pdu[2] = (byte)n;
        return [0, (byte)rng.Next(256), 0, 0, (byte)(pdu.Length >> 8), (byte)pdu.Length, .. pdu];
    }

    private static byte[] Command(Random rng)
    {
        var o = new Dictionary<string, object>
        {
            ["action"] = Actions[rng.Next(Actions.Length)],
            ["point"] = rng.Next(6) == 0 ? "XX-1" : $"FIC-{rng.Next(100, 1000)}",
            ["operator"] = rng.Next(10) == 0 ? "<script>x" : "op" + rng.Next(10),
        };
        if (rng.Next(2) == 0)
        {
            o["value"] = Math.Round(rng.NextDouble() * 130 - 10, 2);
        }
        if (rng.Next(15) == 0)
        {
            o["extra"] = 1;
        }
        return JsonSerializer.SerializeToUtf8Bytes(o);
    }

    private static byte[] Telemetry(Random rng) => Encoding.UTF8.GetBytes(
        $$"""{"tag":"T{{rng.Next(100)}}","ts":{{rng.Next()}},"quality":"{{(rng.Next(5) == 0 ? "stale" : "good")}}","value":{{rng.Next(1000)}}.5}""");

    private static byte[] Junk(Random rng)
    {
        var b = new byte[rng.Next(0, 300)];
        rng.NextBytes(b);
        return b;
    }

    private static byte[] Malware(Random rng)
    {
        var b = Junk(rng);
        return rng.Next(2) == 0 ? [.. b, 0x7f, 0x45, 0x4c, 0x46, 0x02] : [.. "../../etc/passwd "u8, .. b];
    }
}
