using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Deployment;

namespace SieveQ.PreSq.Tests;

/// <summary>Builds a sender-SQ's frames with the real codecs and the sender's own keys from the deployment.</summary>
internal sealed class TestSender : IDisposable
{
    private readonly PartyKeys _keys;
    private readonly int _preSq;

    public TestSender(DeploymentContext deployment, int sender, int preSq)
    {
        _keys = deployment.Keys(PartyRole.Sender, sender);
        Id = sender;
        _preSq = preSq;
    }

    public int Id { get; }

    public PartyKeys Keys => _keys;

    public byte[] Message(long seq, string data = "payload") =>
        SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(Id, seq, TestDeployment.Receiver, System.Text.Encoding.UTF8.GetBytes(data)), _keys.Signing!);

    public byte[] Frame(long seq, string data = "payload") => Wrap(Message(seq, data));

    public byte[] AckRequestFrame(long lastSent, long nonce) => Wrap(AckRequestCodec.Encode(Id, lastSent, Math.Max(1, lastSent), nonce, _keys.Signing!));

    /// <summary>Frames a body with the MAC this sender shares with <paramref name="macFor"/> (default: the pre-SQ it addresses).</summary>
    public byte[] Wrap(byte[] body, int? macFor = null) =>
        SenderFrameCodec.Encode(_preSq, body, _keys.Ring(MacChannel.SenderPreSq, macFor ?? _preSq)!);

    public void Dispose() => _keys.Dispose();
}
