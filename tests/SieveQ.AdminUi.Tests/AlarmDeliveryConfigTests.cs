using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>console.json's alarmDelivery: malformed settings and unsafe secrets stop the console at start with a clear message.</summary>
public sealed class AlarmDeliveryConfigTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-alarm-config-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private ConsoleConfig Load(string alarmDelivery)
    {
        File.WriteAllText(ConsoleConfig.PathIn(_dir), $$"""{ "url": "http://127.0.0.1:5080", "alarmDelivery": {{alarmDelivery}} }""");
        return ConsoleConfig.Load(_dir);
    }

    private const string Hook = """{ "name": "ops", "url": "https://hooks.example.com/sieveq", "secretFile": "keys/ops.secret" }""";
    private const string Mail = """{ "host": "smtp.example.com", "from": "sieveq@example.com", "to": ["ops@example.com"] }""";

    [Fact]
    public void A_complete_configuration_loads_with_its_defaults()
    {
        var cfg = Load($$"""{ "webhooks": [{{Hook}}, { "name": "relay", "url": "http://127.0.0.1:9000/in", "secretFile": "r" }], "mail": {{Mail}}, "whenQueueFull": "dropNewest" }""").AlarmDelivery!;
        Assert.Equal(2, cfg.Webhooks.Count);
        Assert.Equal((587, AlarmMailSecurity.StartTls), (cfg.Mail!.Port, cfg.Mail.Security));
        Assert.Equal((AlarmQueueFullPolicy.DropNewest, 100, 5, 10, 30, 60, true), (cfg.WhenQueueFull, cfg.QueueCapacity, cfg.MaxAttempts, cfg.RequestTimeoutSeconds, cfg.MaxPerMinute, cfg.ReminderMinutes, cfg.SendOnAcknowledge));
    }

    [Theory]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "http://hooks.example.com/x", "secretFile": "s" } ] }""", "cleartext off loopback; use https://")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "http://10.0.0.1/x", "secretFile": "s" } ] }""", "cleartext off loopback")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "ftp://hooks.example.com/x", "secretFile": "s" } ] }""", "is not an http(s) URL")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "hooks", "secretFile": "s" } ] }""", "is not an http(s) URL")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "https://user:pw@hooks.example.com/x", "secretFile": "s" } ] }""", "without user info")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "https://hooks.example.com/x", "secretFile": " " } ] }""", "secretFile is required")]
    [InlineData("""{ "webhooks": [ { "name": "o p s", "url": "https://hooks.example.com/x", "secretFile": "s" } ] }""", "webhook name 'o p s'")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "https://a.example.com/", "secretFile": "s" }, { "name": "ops", "url": "https://b.example.com/", "secretFile": "s" } ] }""", "'ops' is used twice")]
    [InlineData("""{ "mail": { "host": "smtp.example.com", "from": "not an address", "to": ["ops@example.com"] } }""", "from 'not an address' is not an e-mail address")]
    [InlineData("""{ "mail": { "host": "smtp.example.com", "from": "sieveq@example.com", "to": ["ops"] } }""", "to 'ops' is not an e-mail address")]
    [InlineData("""{ "mail": { "host": "smtp.example.com", "from": "sieveq@example.com", "to": [] } }""", "to must list 1 to 32 addresses")]
    [InlineData("""{ "mail": { "host": "smtp.example.com", "security": "none", "from": "sieveq@example.com", "to": ["ops@example.com"] } }""", "allowed only to a loopback host")]
    [InlineData("""{ "mail": { "host": "smtp.example.com", "from": "sieveq@example.com", "to": ["ops@example.com"], "userName": "u" } }""", "userName and passwordFile go together")]
    [InlineData("""{ "mail": { "host": "smtp example", "from": "sieveq@example.com", "to": ["ops@example.com"] } }""", "host 'smtp example' is not a host name")]
    [InlineData("""{ "mail": { "host": "smtp.example.com", "port": 0, "from": "sieveq@example.com", "to": ["ops@example.com"] } }""", "port must be 1 to 65535")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "http://127.0.0.1/x", "secretFile": "s", "tlsPin": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" } ] }""", "tlsPin needs an https:// url")]
    [InlineData("""{ "webhooks": [ { "name": "ops", "url": "https://hooks.example.com/x", "secretFile": "s", "tlsPin": "abc" } ] }""", "tlsPin 'abc' is not base64 of the 32-byte SHA-256")]
    [InlineData("""{ "mail": { "host": "127.0.0.1", "security": "none", "tlsPin": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "from": "sieveq@example.com", "to": ["ops@example.com"] } }""", "tlsPin needs a security other than none")]
    [InlineData("""{ "queueCapacity": 0 }""", "queueCapacity 1..10000")]
    [InlineData("""{ "maxAttempts": 21 }""", "maxAttempts 1..20")]
    [InlineData("""{ "reminderMinutes": -1 }""", "reminderMinutes must be 0")]
    public void Malformed_settings_are_refused_naming_the_file_and_the_setting(string alarmDelivery, string message)
    {
        var e = Assert.Throws<DeploymentException>(() => Load(alarmDelivery));
        Assert.Contains(ConsoleConfig.PathIn(_dir) + ": alarmDelivery: ", e.Message, StringComparison.Ordinal);
        Assert.Contains(message, e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("""{ "whenQueueFull": "dropSome" }""")]
    [InlineData("""{ "webhook": [] }""")]
    [InlineData("""{ "mail": { "host": "h", "from": "a@b.c", "to": ["a@b.c"], "security": 1 } }""")]
    public void Unknown_names_and_values_are_refused(string alarmDelivery) =>
        Assert.Throws<DeploymentException>(() => Load(alarmDelivery));

    private DeploymentConfig Deployment() => new() { F = 1, Replicas = [], PreSqs = [], BaseDirectory = _dir };

    private string Secret(string name, string text, UnixFileMode mode = UnixFileMode.UserRead | UnixFileMode.UserWrite)
    {
        var path = Path.Combine(_dir, name);
        File.WriteAllText(path, text);
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, mode);
        }
        return name;
    }

    [Fact]
    public void Secret_files_are_read_at_start_and_a_missing_shared_short_or_multi_line_one_is_refused()
    {
        AlarmWebhookConfig Hooked(string file) => new() { Name = "ops", Url = "https://hooks.example.com/x", SecretFile = file };
        IReadOnlyList<IAlarmChannel> Channels(AlarmWebhookConfig hook, AlarmMailConfig? mail = null) =>
            AlarmDeliverySetup.Channels(new AlarmDeliveryConfig { Webhooks = [hook], Mail = mail }, Deployment(), TimeProvider.System);

        Assert.Contains("webhook 'ops': secret file " + Path.Combine(_dir, "missing") + " does not exist",
            Assert.Throws<DeploymentException>(() => Channels(Hooked("missing"))).Message, StringComparison.Ordinal);
        Assert.Contains("fewer than 16 characters",
            Assert.Throws<DeploymentException>(() => Channels(Hooked(Secret("short", "abc\n")))).Message, StringComparison.Ordinal);
        Assert.Contains("on one line",
            Assert.Throws<DeploymentException>(() => Channels(Hooked(Secret("two-lines", "0123456789abcdef\nmore\n")))).Message, StringComparison.Ordinal);
        if (!OperatingSystem.IsWindows())
        {
            Assert.Contains("readable or writable by others",
                Assert.Throws<DeploymentException>(() => Channels(Hooked(Secret("shared", "0123456789abcdef", UnixFileMode.UserRead | UnixFileMode.OtherRead)))).Message, StringComparison.Ordinal);
        }
        var good = Hooked(Secret("good", "0123456789abcdef\n"));
        var mail = new AlarmMailConfig { Host = "smtp.example.com", From = "a@example.com", To = ["b@example.com"], UserName = "u", PasswordFile = "no-password" };
        Assert.Contains("mail: password file", Assert.Throws<DeploymentException>(() => Channels(good, mail)).Message, StringComparison.Ordinal);
        var channels = Channels(good, mail with { PasswordFile = Secret("password", "pw") });
        Assert.Equal(["webhook:ops", "mail"], channels.Select(c => c.Name));
        foreach (var c in channels.OfType<IDisposable>())
        {
            c.Dispose();
        }
    }
}
