using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// A real MIT Kerberos realm in a temporary directory, made and run as an ordinary user: krb5.conf and kdc.conf
/// (<see cref="ConfigFile"/> as KRB5_CONFIG, the KDC profile as KRB5_KDC_PROFILE), a database made with kdb5_util,
/// the console's service principal HTTP/localhost with a keytab (kadmin.local ktadd), users with passwords, krb5kdc in
/// the foreground on a free loopback port, and each user's tickets from kinit in a cache of its own.
/// </summary>
public sealed class KerberosRealm : IAsyncDisposable
{
    public const string Realm = "SIEVEQ.TEST";
    public const string ServicePrincipal = "HTTP/localhost";

    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-krb5-").FullName;
    private readonly List<string> _log = [];
    private Process? _kdc;

    public string ConfigFile => Path.Combine(_dir, "krb5.conf");
    private string KdcProfile => Path.Combine(_dir, "kdc.conf");
    public string Keytab => Path.Combine(_dir, "http-localhost.keytab");
    public int Port { get; private set; }

    /// <summary>The FILE: credential cache holding <paramref name="user"/>'s tickets after <see cref="KinitAsync"/>.</summary>
    public string CacheOf(string user) => "FILE:" + Path.Combine(_dir, user + ".ccache");

    public static bool Installed => File.Exists("/usr/sbin/krb5kdc") && File.Exists("/usr/sbin/kadmin.local") && File.Exists("/usr/bin/kinit");

    /// <summary>The environment a Kerberos client or the console needs for this realm.</summary>
    public Dictionary<string, string> Environment(string? cacheOf = null)
    {
        var env = new Dictionary<string, string> { ["KRB5_CONFIG"] = ConfigFile, ["KRB5_KDC_PROFILE"] = KdcProfile };
        if (cacheOf is not null)
        {
            env["KRB5CCNAME"] = CacheOf(cacheOf);
        }
        return env;
    }

    public static async Task<KerberosRealm> StartAsync(IEnumerable<string> users)
    {
        if (!Installed)
        {
            throw new InvalidOperationException("MIT Kerberos is not installed: apt-get install krb5-kdc krb5-admin-server krb5-user (tests/run-all.sh does)");
        }
        var realm = new KerberosRealm();
        try
        {
            // A port probed free can be taken before krb5kdc binds it: then another one.
            for (var attempt = 0; ; attempt++)
            {
                realm.Port = FreePort();
                realm.WriteConfiguration();
                if (attempt == 0)
                {
                    await realm.RunAsync("/usr/sbin/kdb5_util", "create", "-s", "-r", Realm, "-P", "sieveq-master-" + Guid.NewGuid().ToString("N"));
                    await realm.AdminAsync($"addprinc -randkey {ServicePrincipal}");
                    await realm.AdminAsync($"ktadd -k {realm.Keytab} {ServicePrincipal}");
                    foreach (var user in users)
                    {
                        await realm.AdminAsync($"addprinc -pw {Password(user)} {user}");
                    }
                }
                if (await realm.StartKdcAsync() || attempt == 4)
                {
                    break;
                }
            }
            Assert.True(realm._kdc is { HasExited: false }, "krb5kdc did not start: " + string.Join('\n', realm._log));
            foreach (var user in users)
            {
                await realm.KinitAsync(user);
            }
            return realm;
        }
        catch
        {
            await realm.DisposeAsync();
            throw;
        }
    }

    /// <summary>A test user's password, used once by kinit (nothing else signs in with it).</summary>
    private static string Password(string user) => $"{user}-kerberos-test-password";

    private void WriteConfiguration()
    {
        // No DNS for anything: the KDC is named by address, and localhost is not canonicalised, so the SPN a client
        // asks for is exactly HTTP/localhost. TCP only (udp_preference_limit 1) on the KDC's one port.
        File.WriteAllText(ConfigFile, $$"""
            [libdefaults]
              default_realm = {{Realm}}
              dns_lookup_kdc = false
              dns_lookup_realm = false
              dns_canonicalize_hostname = false
              rdns = false
              udp_preference_limit = 1
            [realms]
              {{Realm}} = {
                kdc = 127.0.0.1:{{Port}}
              }
            [domain_realm]
              localhost = {{Realm}}
            """);
        File.WriteAllText(KdcProfile, $$"""
            [kdcdefaults]
              kdc_listen = 127.0.0.1:{{Port}}
              kdc_tcp_listen = 127.0.0.1:{{Port}}
            [realms]
              {{Realm}} = {
                database_name = {{_dir}}/principal
                key_stash_file = {{_dir}}/stash
                acl_file = {{_dir}}/kadm5.acl
                kdc_listen = 127.0.0.1:{{Port}}
                kdc_tcp_listen = 127.0.0.1:{{Port}}
              }
            [logging]
              kdc = FILE:{{_dir}}/kdc.log
              admin_server = FILE:{{_dir}}/kadmin.log
              default = FILE:{{_dir}}/krb5.log
            """);
    }

    private Task AdminAsync(string query) => RunAsync("/usr/sbin/kadmin.local", "-q", query);

    /// <summary>Starts krb5kdc in the foreground (-n) and waits until it accepts TCP connections; false when it exited.</summary>
    private async Task<bool> StartKdcAsync()
    {
        var psi = Start("/usr/sbin/krb5kdc", "-n", "-r", Realm);
        _kdc = Process.Start(psi)!;
        _kdc.OutputDataReceived += (_, e) => Keep(e.Data);
        _kdc.ErrorDataReceived += (_, e) => Keep(e.Data);
        _kdc.BeginOutputReadLine();
        _kdc.BeginErrorReadLine();
        var deadline = DateTime.UtcNow.AddSeconds(20);
        while (DateTime.UtcNow < deadline && !_kdc.HasExited)
        {
            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync(IPAddress.Loopback, Port);
                return true;
            }
            catch (SocketException)
            {
                await Task.Delay(100);
            }
        }
        if (!_kdc.HasExited)
        {
            _kdc.Kill();
        }
        _kdc.Dispose();
        _kdc = null;
        return false;
    }

    /// <summary>Tickets for <paramref name="user"/> in its own cache (the password on kinit's standard input).</summary>
    public async Task KinitAsync(string user)
    {
        var psi = Start("/usr/bin/kinit", "-c", CacheOf(user), user + "@" + Realm);
        psi.RedirectStandardInput = true;
        using var p = Process.Start(psi)!;
        await p.StandardInput.WriteLineAsync(Password(user));
        p.StandardInput.Close();
        var output = await p.StandardOutput.ReadToEndAsync() + await p.StandardError.ReadToEndAsync();
        await p.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
        Assert.True(p.ExitCode == 0, $"kinit {user}: {output}");
    }

    private async Task RunAsync(string file, params string[] args)
    {
        using var p = Process.Start(Start(file, args))!;
        var output = await p.StandardOutput.ReadToEndAsync() + await p.StandardError.ReadToEndAsync();
        await p.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(180));
        Assert.True(p.ExitCode == 0, $"{file} {string.Join(' ', args)}: {output}");
    }

    private ProcessStartInfo Start(string file, params string[] args)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        foreach (var (k, v) in Environment())
        {
            psi.Environment[k] = v;
        }
        return psi;
    }

    private void Keep(string? line)
    {
        if (line is not null)
        {
            lock (_log)
            {
                _log.Add(line);
            }
        }
    }

    private static int FreePort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        if (_kdc is { HasExited: false })
        {
            _kdc.Kill();
            await _kdc.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(10));
        }
        _kdc?.Dispose();
        try
        {
            Directory.Delete(_dir, recursive: true);
        }
        catch (IOException)
        {
            // the KDC closing its log; the temp folder is cleaned by the system
        }
    }
}
