using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>The console as `serve` builds it: alarmDelivery's channels made at start, or the start refused with the reason.</summary>
public sealed class AlarmDeliveryStartTests : IAsyncLifetime
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-alarm-delivery-").FullName;

    public Task InitializeAsync() => BareConsoleDeployment.CreateAsync(_dir);

    public Task DisposeAsync()
    {
        Directory.Delete(_dir, recursive: true);
        return Task.CompletedTask;
    }

    private void Configure(AlarmDeliveryConfig delivery)
    {
        var raw = System.Text.Json.JsonSerializer.Deserialize<ConsoleConfig>(File.ReadAllText(ConsoleConfig.PathIn(_dir)), ConsoleConfig.Options)!;
        (raw with { AlarmDelivery = delivery }).Save(_dir);
    }

    private static readonly AlarmDeliveryConfig Delivery = new()
    {
        WhenQueueFull = AlarmQueueFullPolicy.DropNewest,
        Webhooks = [new AlarmWebhookConfig { Name = "ops", Url = "https://hooks.example.com/sieveq", SecretFile = "console/ops.secret" }],
        Mail = new AlarmMailConfig { Host = "smtp.example.com", From = "sieveq@example.com", To = ["ops@example.com"] },
    };

    [Fact]
    public async Task A_missing_secret_stops_the_start_with_its_path_and_with_it_the_console_has_both_channels()
    {
        Configure(Delivery);
        var secret = Path.Combine(_dir, "console", "ops.secret");
        var refused = Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []));
        Assert.Equal($"alarmDelivery: webhook 'ops': secret file {secret} does not exist", refused.Message);

        await File.WriteAllTextAsync(secret, "a-webhook-secret-of-32-characters\n");
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(secret, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
        await using var app = ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []);
        var dispatch = app.Services.GetRequiredService<AlarmDispatch>();
        Assert.Equal(["webhook:ops", "mail"], dispatch.Queues.Select(q => q.Name));
        Assert.Contains(app.Services.GetServices<IHostedService>(), s => ReferenceEquals(s, dispatch));
        // The file as `init` re-saves it keeps the section, its enums in the file's words.
        Assert.Contains("\"whenQueueFull\": \"dropNewest\"", await File.ReadAllTextAsync(ConsoleConfig.PathIn(_dir)), StringComparison.Ordinal);
        Assert.Equal(Delivery.Webhooks[0], ConsoleConfig.Load(_dir).AlarmDelivery!.Webhooks[0]);
    }
}
