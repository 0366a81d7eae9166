using System.Security.Cryptography;

namespace SieveQ.Bft.Hosting.Crypto;

/// <summary>
/// A node's static P-256 identity: it signs link handshakes and (for replicas) the proofs other replicas
/// must be able to show. Stored as PKCS#8 PEM readable by the owner only.
/// </summary>
public sealed class IdentityKey : IDisposable
{
    private IdentityKey(ECDsa key) => Key = key;

    public ECDsa Key { get; }

    public string PublicKeyBase64 => Convert.ToBase64String(Key.ExportSubjectPublicKeyInfo());

    public static IdentityKey Generate() => new(ECDsa.Create(ECCurve.NamedCurves.nistP256));

    public static IdentityKey Load(string pemPath)
    {
        var key = ECDsa.Create();
        key.ImportFromPem(File.ReadAllText(pemPath));
        if (key.KeySize != 256)
        {
            key.Dispose();
            throw new CryptographicException($"{pemPath}: identity keys must be P-256");
        }
        return new IdentityKey(key);
    }

    public static IdentityKey FromPem(string pem)
    {
        var key = ECDsa.Create();
        key.ImportFromPem(pem);
        return new IdentityKey(key);
    }

    public string ExportPem() => Key.ExportPkcs8PrivateKeyPem();

    /// <summary>Writes the private key so that only the owner can read it; the file is created with 0600 before any byte is written.</summary>
    public void Save(string pemPath)
    {
        var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        using (var fs = new FileStream(pemPath, options))
        using (var w = new StreamWriter(fs))
        {
            w.Write(ExportPem());
        }
        if (!OperatingSystem.IsWindows())
        {
            // UnixCreateMode is ignored when the file already existed; force the mode either way.
            File.SetUnixFileMode(pemPath, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
    }

    public static ECDsa ImportPublic(string spkiBase64)
    {
        var key = ECDsa.Create();
        key.ImportSubjectPublicKeyInfo(Convert.FromBase64String(spkiBase64), out _);
        if (key.KeySize != 256)
        {
            key.Dispose();
            throw new CryptographicException("pinned keys must be P-256");
        }
        return key;
    }

    public void Dispose() => Key.Dispose();
}
