using System.Security.Cryptography;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Tests;

public sealed class KeyTests : IClassFixture<TestWorld>, IDisposable
{
    private readonly TestWorld _w;
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-keys-" + Guid.NewGuid().ToString("N"));

    public KeyTests(TestWorld w) => _w = w;

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    [Fact]
    public void Both_sides_derive_the_same_mac_key()
    {
        var senderSide = MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 7, _w.SenderAgreement[1], _w.PreSqAgreement[10].ExportSubjectPublicKeyInfo());
        var preSqSide = MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 7, _w.PreSqAgreement[10], _w.SenderAgreement[1].ExportSubjectPublicKeyInfo());
        Assert.Equal(senderSide, preSqSide);
        Assert.Equal(32, senderSide.Length);
        // Epoch, ids and channel all separate keys.
        Assert.NotEqual(senderSide, MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 8, _w.SenderAgreement[1], _w.PreSqAgreement[10].ExportSubjectPublicKeyInfo()));
        Assert.NotEqual(senderSide, MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 11, 7, _w.SenderAgreement[1], _w.PreSqAgreement[10].ExportSubjectPublicKeyInfo()));
        Assert.NotEqual(senderSide, MacKeyDerivation.Derive(MacChannel.ReplicaSender, 1, 10, 7, _w.SenderAgreement[1], _w.PreSqAgreement[10].ExportSubjectPublicKeyInfo()));
    }

    [Fact]
    public void Rotation_accepts_the_previous_epoch_and_refuses_older()
    {
        var spki = _w.PreSqAgreement[10].ExportSubjectPublicKeyInfo();
        var sender = new MacKeyRing(1, MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 1, _w.SenderAgreement[1], spki));
        var preSq = new MacKeyRing(1, MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 1, _w.PreSqAgreement[10], _w.SenderAgreement[1].ExportSubjectPublicKeyInfo()));
        var mac1 = new byte[32];
        Assert.Equal(1u, sender.Sign("t"u8, "data"u8, mac1));

        // The pre-SQ rotates first; frames MACed under epoch 1 still pass.
        preSq.Rotate(2, MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 2, _w.PreSqAgreement[10], _w.SenderAgreement[1].ExportSubjectPublicKeyInfo()));
        Assert.True(preSq.Verify(1, "t"u8, "data"u8, mac1));

        sender.Rotate(2, MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 2, _w.SenderAgreement[1], spki));
        var mac2 = new byte[32];
        Assert.Equal(2u, sender.Sign("t"u8, "data"u8, mac2));
        Assert.True(preSq.Verify(2, "t"u8, "data"u8, mac2));
        Assert.False(preSq.Verify(1, "t"u8, "data"u8, mac2));

        preSq.Rotate(3, MacKeyDerivation.Derive(MacChannel.SenderPreSq, 1, 10, 3, _w.PreSqAgreement[10], _w.SenderAgreement[1].ExportSubjectPublicKeyInfo()));
        Assert.True(preSq.Verify(2, "t"u8, "data"u8, mac2));
        Assert.False(preSq.Verify(1, "t"u8, "data"u8, mac1));
        Assert.Throws<ArgumentOutOfRangeException>(() => preSq.Rotate(3, new byte[32]));
    }

    [Fact]
    public void Pem_store_creates_owner_only_keys_and_reloads_them()
    {
        if (OperatingSystem.IsWindows())
        {
            return; // Unix modes only; Windows uses CngKeyStore and ACLs.
        }
        var store = new PemFileKeyStore(_dir);
        using var created = store.GetOrCreateSigningKey("sender-1");
        var path = Path.Combine(_dir, "sender-1.pem");
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(path));
        using var loaded = store.OpenSigningKey("sender-1");
        var sig = loaded.SignData("x"u8, HashAlgorithmName.SHA256);
        Assert.True(created.VerifyData("x"u8, sig, HashAlgorithmName.SHA256));
        Assert.Equal(created.ExportSubjectPublicKeyInfo(), store.ExportPublicKey("sender-1"));

        using var kex = store.GetOrCreateAgreementKey("sender-1-kex");
        Assert.Equal(kex.ExportSubjectPublicKeyInfo(), store.ExportPublicKey("sender-1-kex"));
    }

    [Fact]
    public void Pem_store_refuses_a_key_readable_by_others()
    {
        if (OperatingSystem.IsWindows())
        {
            return; // Unix modes only; Windows uses CngKeyStore and ACLs.
        }
        var store = new PemFileKeyStore(_dir);
        store.GetOrCreateSigningKey("k").Dispose();
        File.SetUnixFileMode(Path.Combine(_dir, "k.pem"), (UnixFileMode)Convert.ToInt32("644", 8));
        var e = Assert.Throws<KeyStoreException>(() => store.OpenSigningKey("k"));
        Assert.Contains("600", e.Message, StringComparison.Ordinal);
        File.SetUnixFileMode(Path.Combine(_dir, "k.pem"), (UnixFileMode)Convert.ToInt32("640", 8));
        Assert.Throws<KeyStoreException>(() => store.OpenSigningKey("k"));
        File.SetUnixFileMode(Path.Combine(_dir, "k.pem"), (UnixFileMode)Convert.ToInt32("600", 8));
        store.OpenSigningKey("k").Dispose();
    }

    [Fact]
    public void Pem_store_refuses_bad_names_and_bad_files()
    {
        var store = new PemFileKeyStore(_dir);
        Assert.Throws<KeyStoreException>(() => store.GetOrCreateSigningKey("../evil"));
        Assert.Throws<KeyStoreException>(() => store.OpenSigningKey("absent"));
        Directory.CreateDirectory(_dir);
        var path = Path.Combine(_dir, "junk.pem");
        File.WriteAllText(path, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
        Assert.Throws<KeyStoreException>(() => store.OpenSigningKey("junk"));
    }

    [Fact]
    public void Enrolment_round_trips_through_json_and_validates()
    {
        var json = _w.Enrolment.ToJson();
        var back = Enrolment.FromJson(json);
        Assert.Equal(_w.Enrolment.Senders.Select(s => Convert.ToBase64String(s.SignaturePublicKey)), back.Senders.Select(s => Convert.ToBase64String(s.SignaturePublicKey)));
        Assert.Equal(4, back.ReplicaCount);
        Assert.Throws<FormatException>(() => Enrolment.FromJson("{"));
        Assert.Throws<FormatException>(() => Enrolment.FromJson(json.Replace("\"f\": 1", "\"f\": 2", StringComparison.Ordinal)));
    }

    [Fact]
    public void Fuzzed_enrolment_json_throws_only_FormatException()
    {
        var seed = System.Text.Encoding.UTF8.GetBytes(_w.Enrolment.ToJson());
        var rng = new Random(5);
        for (var i = 0; i < 3000; i++)
        {
            var text = System.Text.Encoding.UTF8.GetString(EnvelopeTests.Mutate(seed, rng));
            try
            {
                Enrolment.FromJson(text);
            }
            catch (FormatException)
            {
            }
        }
        foreach (var text in new[] { "null", "{}", "{\"f\":1}", "{\"f\":1,\"senders\":[null],\"receivers\":[],\"preSqs\":[],\"replicas\":[]}", "[]" })
        {
            Assert.Throws<FormatException>(() => Enrolment.FromJson(text));
        }
    }
}
