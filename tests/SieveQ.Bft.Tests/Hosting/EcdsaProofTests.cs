using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Hosting;

public sealed class EcdsaProofTests
{
    [Fact]
    public void WriteSignedByItsReplicaVerifiesAndNoOtherReplicaCanClaimIt()
    {
        using var cluster = new TempCluster();
        var ring = new KeyRing(cluster.Config);
        var verifier = new EcdsaProofVerifier(ring, cluster.Config.N);
        using var key1 = ClusterBootstrap.LoadKey(cluster.Config, 1);
        var signer = new EcdsaProofSigner(key1);
        var hash = Digest.Compute("batch"u8);
        var sig = signer.Sign(SigningBytes.ForWrite(2, 10, hash));
        Assert.Equal(64, sig.Length);  // IEEE P1363 r||s

        Assert.True(ProofCheck.VerifySignatures(new Write(1, 2, 10, hash, sig), verifier, 4));
        Assert.False(ProofCheck.VerifySignatures(new Write(2, 2, 10, hash, sig), verifier, 4));
        Assert.False(ProofCheck.VerifySignatures(new Write(1, 2, 11, hash, sig), verifier, 4));
        Assert.False(ProofCheck.VerifySignatures(new Write(1, 3, 10, hash, sig), verifier, 4));
        Assert.False(verifier.Verify(5, SigningBytes.ForWrite(2, 10, hash), sig));  // clients sign no proofs
    }

    [Fact]
    public void KeysAreWrittenOwnerOnlyAndTheConfigRoundTrips()
    {
        using var cluster = new TempCluster(replicas: 4, clients: 3);
        var loaded = ClusterConfigFile.Load(Path.Combine(cluster.Directory, ClusterBootstrap.ConfigFileName));
        Assert.Equal(4, loaded.N);
        Assert.Equal([4, 5, 6], loaded.Clients.Select(c => c.Id));
        Assert.Equal(cluster.Config.Replicas.Select(r => r.PublicKey), loaded.Replicas.Select(r => r.PublicKey));
        if (!OperatingSystem.IsWindows())
        {
            foreach (var file in Directory.GetFiles(Path.Combine(cluster.Directory, "keys")))
            {
                Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(file));
            }
        }
        using var k = ClusterBootstrap.LoadKey(loaded, 5);
        Assert.Equal(loaded.Client(5).PublicKey, k.PublicKeyBase64);
    }
}
