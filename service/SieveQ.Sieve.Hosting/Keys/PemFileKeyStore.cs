using System.Security.Cryptography;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Hosting.Keys;

/// <summary>
/// Keys as PKCS#8 PEM files (<c>name.pem</c>) in one directory, for every platform without CNG.
/// Files are created owner-read/write only (0600) in the same call that creates them, so there is no
/// window in which they are readable by others; loading refuses a file that group or others can read
/// or write, as ssh does, because such a key may already be in someone else's hands.
/// On Windows the Unix mode bits do not exist; there the NTFS ACLs of the directory protect the
/// files, and <see cref="CngKeyStore"/> is the store to use.
/// </summary>
public sealed class PemFileKeyStore : ISenderKeyStore
{
    private const UnixFileMode OwnerOnly = UnixFileMode.UserRead | UnixFileMode.UserWrite;
    private const UnixFileMode Unsafe = UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.GroupExecute
        | UnixFileMode.OtherRead | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute;

    private readonly string _directory;

    public PemFileKeyStore(string directory)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        _directory = directory;
    }

    public bool Exists(string name) => File.Exists(PathOf(name));

    public ECDsa GetOrCreateSigningKey(string name)
    {
        if (!Exists(name))
        {
            using var fresh = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            Write(name, fresh.ExportPkcs8PrivateKeyPem());
        }
        return OpenSigningKey(name);
    }

    public ECDsa OpenSigningKey(string name)
    {
        var pem = ReadChecked(name);
        var key = ECDsa.Create();
        try
        {
            key.ImportFromPem(pem);
            CheckCurve(key.ExportParameters(false).Curve, name);
            return key;
        }
        catch (CryptographicException e)
        {
            key.Dispose();
            throw new KeyStoreException($"key '{name}' is not a valid P-256 PKCS#8 key", e);
        }
        catch
        {
            key.Dispose();
            throw;
        }
    }

    public ECDiffieHellman GetOrCreateAgreementKey(string name)
    {
        if (!Exists(name))
        {
            using var fresh = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
            Write(name, fresh.ExportPkcs8PrivateKeyPem());
        }
        var pem = ReadChecked(name);
        var key = ECDiffieHellman.Create();
        try
        {
            key.ImportFromPem(pem);
            CheckCurve(key.ExportParameters(false).Curve, name);
            return key;
        }
        catch (CryptographicException e)
        {
            key.Dispose();
            throw new KeyStoreException($"key '{name}' is not a valid P-256 PKCS#8 key", e);
        }
        catch
        {
            key.Dispose();
            throw;
        }
    }

    public byte[] ExportPublicKey(string name)
    {
        // Either algorithm object reads the same PKCS#8 EC key; the SPKI is identical.
        using var key = OpenSigningKey(name);
        return key.ExportSubjectPublicKeyInfo();
    }

    private string PathOf(string name) => Path.Combine(_directory, KeyNames.Check(name) + ".pem");

    private void Write(string name, string pem)
    {
        Directory.CreateDirectory(_directory);
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write, Share = FileShare.None };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = OwnerOnly;
        }
        using (var fs = new FileStream(PathOf(name), options))
        using (var sw = new StreamWriter(fs))
        {
            sw.Write(pem);
            sw.Flush();
            fs.Flush(flushToDisk: true);
        }
        if (!OperatingSystem.IsWindows())
        {
            // The umask can only remove bits from UnixCreateMode; set the mode explicitly anyway.
            File.SetUnixFileMode(PathOf(name), OwnerOnly);
        }
    }

    private string ReadChecked(string name)
    {
        var path = PathOf(name);
        if (!File.Exists(path))
        {
            throw new KeyStoreException($"no key '{name}' in {_directory}");
        }
        if (!OperatingSystem.IsWindows())
        {
            var mode = File.GetUnixFileMode(path);
            if ((mode & Unsafe) != 0)
            {
                throw new KeyStoreException($"key file {path} has mode {Convert.ToString((int)mode, 8)}; it must be readable by its owner only (chmod 600)");
            }
        }
        return File.ReadAllText(path);
    }

    private static void CheckCurve(ECCurve curve, string name)
    {
        if (curve.Oid?.Value != ECCurve.NamedCurves.nistP256.Oid.Value)
        {
            throw new KeyStoreException($"key '{name}' is not on curve P-256");
        }
    }
}
