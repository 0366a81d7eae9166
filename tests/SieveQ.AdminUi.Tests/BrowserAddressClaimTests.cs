using System.Net;
using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Tests;

/// <summary>The address of each authenticated request's connection, put in the principal the console attributes changes to.</summary>
public sealed class BrowserAddressClaimTests : IAsyncLifetime
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-address-").FullName;

    public Task InitializeAsync() => BareConsoleDeployment.CreateAsync(_dir);

    public Task DisposeAsync()
    {
        Directory.Delete(_dir, recursive: true);
        return Task.CompletedTask;
    }

    private static BrowserAddressClaim From(string? address) => new(new HttpContextAccessor
    {
        HttpContext = new DefaultHttpContext { Connection = { RemoteIpAddress = address is null ? null : IPAddress.Parse(address) } },
    });

    private static ClaimsPrincipal User(params Claim[] extra) =>
        new(new ClaimsIdentity([new Claim(ClaimTypes.Name, "olga"), new Claim(ClaimTypes.Role, "operator"), .. extra], "cookie"));

    [Fact]
    public async Task A_signed_in_request_carries_its_connections_address_once_however_often_it_is_transformed()
    {
        var transform = From("::ffff:192.0.2.9");
        var user = User();
        var once = await transform.TransformAsync(user);
        var twice = await transform.TransformAsync(once);
        Assert.Equal(new ConsoleCaller("olga", "192.0.2.9"), ConsoleCaller.Of(twice));
        Assert.Single(twice.FindAll(BrowserAddressClaim.Type));
        Assert.Null(user.FindFirst(BrowserAddressClaim.Type));
        Assert.Equal("console user 'olga' from 192.0.2.9: flooding", AttributedReason.Of(ConsoleCaller.Of(twice), "flooding"));
    }

    [Fact]
    public async Task A_session_used_from_another_address_is_attributed_to_the_new_one_not_the_sign_ins()
    {
        var moved = await From("2001:db8::5").TransformAsync(User(new Claim(BrowserAddressClaim.Type, "192.0.2.9")));
        Assert.Equal(["2001:db8::5"], moved.FindAll(BrowserAddressClaim.Type).Select(c => c.Value));
    }

    [Fact]
    public async Task An_anonymous_request_or_one_without_a_connection_address_gets_no_address()
    {
        var anonymous = new ClaimsPrincipal(new ClaimsIdentity());
        Assert.Same(anonymous, await From("192.0.2.9").TransformAsync(anonymous));
        var user = User();
        Assert.Same(user, await From(null).TransformAsync(user));
        Assert.Equal(new ConsoleCaller("olga", null), ConsoleCaller.Of(user));
    }

    [Fact]
    public async Task The_console_as_serve_builds_it_applies_the_transformation()
    {
        await using var app = ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []);
        Assert.Contains(app.Services.GetServices<IClaimsTransformation>(), t => t is BrowserAddressClaim);
    }
}
