using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.DataProtection;
using MudBlazor.Services;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Components;
using SieveQ.AdminUi.Figures;
using SieveQ.Controller;
using SieveQ.Deployment;
using SieveQ.Transport.Hardening;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// The console's web application: cookie authentication against the local accounts, role policies as the fallback
/// for every endpoint, antiforgery, security headers, and the Blazor components with server interactivity.
/// Hosted in the generic host (systemd notify, Windows service).
/// </summary>
public static class ConsoleWebApp
{
    public static WebApplication Build(string deploymentDirectory, string[] args) => Build(deploymentDirectory, ConsoleServeSettings.FromFiles, args);

    public static WebApplication Build(string deploymentDirectory, ConsoleServeSettings settings, string[] args)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var deployment = DeploymentFile.Load(deploymentDirectory);
        var config = ConsoleConfig.Load(deployment.BaseDirectory);
        if (settings.Tls() is { } tls)
        {
            config = config.WithListener(settings.Url ?? config.Url, tls);
        }
        else if (settings.Url is { } url)
        {
            config = config.WithUrl(url);
        }
        var controller = settings.ControllerUrl is { } controllerUrl
            ? new ControllerConfig { Url = controllerUrl, TlsPin = settings.ControllerPin, Callers = [] }
            : ControllerConfig.Load(deployment.BaseDirectory);
        try
        {
            controller.Pin();
        }
        catch (DeploymentException e)
        {
            throw new DeploymentException($"--controller: {e.Message}", e);
        }
        var key = ManagementKeyFile.Read(deployment.Resolve(config.KeyFile));
        var users = ConsoleUserStore.Open(deployment.Resolve(config.UsersFile), config);
        KerberosKeytab.Use(config.WindowsSignIn);
        var certificate = ConsoleCertificate.Load(config, deployment, TimeProvider.System);
        var alarmChannels = AlarmDeliverySetup.Channels(config.AlarmDelivery, deployment, TimeProvider.System);

        var builder = WebApplication.CreateBuilder(new WebApplicationOptions
        {
            Args = args,
            ApplicationName = typeof(ConsoleWebApp).Assembly.GetName().Name,
            ContentRootPath = AppContext.BaseDirectory,
        });
        // Static assets of the component library come from the build's manifest whatever the environment.
        builder.WebHost.UseStaticWebAssets();
        builder.Services.AddSystemd();
        builder.Services.AddWindowsService(o => o.ServiceName = "SieveQ Console");
        builder.WebHost.ConfigureKestrel(k =>
        {
            // The same limits as the components' listeners where they apply to a browser's HTTP/1.1 and HTTP/2.
            k.AddServerHeader = false;
            k.Limits.MaxConcurrentConnections = 256;
            k.Limits.MaxRequestBodySize = 64 * 1024;
            k.Limits.MaxRequestHeadersTotalSize = 32 * 1024;
            k.Limits.MaxRequestHeaderCount = 64;
            k.Limits.RequestHeadersTimeout = TimeSpan.FromSeconds(10);
            k.Limits.KeepAliveTimeout = TimeSpan.FromSeconds(120);
            ConsoleTls.Listen(k, config.Url, certificate, new SourceConnectionLimiter(64));
        });

        builder.Services.AddSingleton(config);
        builder.Services.AddSingleton(deployment);
        builder.Services.AddSingleton(users);
        builder.Services.AddSingleton(TimeProvider.System);
        builder.Services.AddSingleton<ConsoleMetrics>();
        if (certificate is not null)
        {
            builder.Services.AddSingleton(certificate);
            builder.Services.AddSingleton<ConsoleCertificateRenewal>();
            builder.Services.AddHostedService(sp => sp.GetRequiredService<ConsoleCertificateRenewal>());
        }
        builder.Services.AddSingleton<IControllerGateway>(_ => new ControllerGateway(new ManagementClient(new Uri(controller.Url), key, pin: controller.Pin())));
        builder.Services.AddSingleton<LiveFigures>();
        builder.Services.AddHostedService(sp => sp.GetRequiredService<LiveFigures>());
        builder.Services.AddSingleton(new AlarmJournal(deployment.Resolve(config.AlarmsFile)));
        builder.Services.AddSingleton(sp => new ProviderLogouts(deployment.Resolve(config.ProviderLogoutsFile), TimeSpan.FromMinutes(config.SessionMinutes),
            TimeProvider.System, sp.GetRequiredService<ILogger<ProviderLogouts>>()));
        builder.Services.AddSingleton<AlarmBook>();
        builder.Services.AddHostedService(sp => sp.GetRequiredService<AlarmBook>());
        builder.Services.AddSingleton<AlarmDeliveryMetrics>();
        builder.Services.AddSingleton(sp => new AlarmDispatch(sp.GetRequiredService<AlarmBook>(), config.AlarmDelivery, alarmChannels, TimeProvider.System,
            sp.GetRequiredService<AlarmDeliveryMetrics>(), sp.GetRequiredService<ILogger<AlarmDispatch>>()));
        builder.Services.AddHostedService(sp => sp.GetRequiredService<AlarmDispatch>());
        builder.Services.AddScoped<PartyActions>();
        builder.Services.AddScoped<AlarmActions>();
        builder.Services.AddScoped<AlarmTestAction>();
        builder.Services.AddScoped<EnrolmentActions>();
        builder.Services.AddScoped<AccountActions>();
        builder.Services.AddScoped<RuleSetChanges.RuleSetActions>();
        builder.Services.AddHttpContextAccessor();
        builder.Services.AddTransient<Microsoft.AspNetCore.Authentication.IClaimsTransformation, BrowserAddressClaim>();

        builder.Services.AddDataProtection().PersistKeysToFileSystem(new DirectoryInfo(deployment.Resolve(config.DataProtectionDirectory)))
            .SetApplicationName("SieveQ.AdminUi");
        builder.Services.AddAuthentication(CookieAuthenticationDefaults.AuthenticationScheme).AddCookie(o =>
        {
            o.Cookie.Name = "sieveq-console";
            o.Cookie.HttpOnly = true;
            o.Cookie.SameSite = SameSiteMode.Strict;
            o.Cookie.SecurePolicy = certificate is null ? CookieSecurePolicy.SameAsRequest : CookieSecurePolicy.Always;
            o.ExpireTimeSpan = TimeSpan.FromMinutes(config.SessionMinutes);
            o.SlidingExpiration = false;
            o.LoginPath = AccountEndpoints.LoginPath;
            o.AccessDeniedPath = "/denied";
            o.Events.OnValidatePrincipal = context => SessionCheck.ValidateAsync(context, users, config.Oidc);
            o.Events.OnRedirectToAccessDenied = context =>
            {
                // An API caller gets a plain 403, a browser the page.
                if (context.Request.Path.StartsWithSegments("/api", StringComparison.Ordinal))
                {
                    context.Response.StatusCode = StatusCodes.Status403Forbidden;
                    return Task.CompletedTask;
                }
                context.Response.Redirect(context.RedirectUri);
                return Task.CompletedTask;
            };
            o.Events.OnRedirectToLogin = context =>
            {
                if (context.Request.Path.StartsWithSegments("/api", StringComparison.Ordinal))
                {
                    context.Response.StatusCode = StatusCodes.Status401Unauthorized;
                    return Task.CompletedTask;
                }
                context.Response.Redirect(context.RedirectUri);
                return Task.CompletedTask;
            };
        }).AddConsoleOidc(config, deployment);
        builder.Services.AddAuthorizationBuilder()
            .AddPolicy(ConsolePolicies.Viewer, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Viewer)))
            .AddPolicy(ConsolePolicies.Operator, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Operator)))
            .AddPolicy(ConsolePolicies.Administrator, p => p.RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Administrator)))
            .SetFallbackPolicy(new AuthorizationPolicyBuilder().RequireAuthenticatedUser().RequireRole(ConsolePolicies.RolesFrom(ConsoleRole.Viewer)).Build());
        builder.Services.AddCascadingAuthenticationState();
        builder.Services.AddAntiforgery(o =>
        {
            o.Cookie.Name = "sieveq-console-af";
            o.Cookie.SameSite = SameSiteMode.Strict;
            o.Cookie.SecurePolicy = CookieSecurePolicy.SameAsRequest;
            o.HeaderName = null;
        });
        builder.Services.AddRazorComponents().AddInteractiveServerComponents(o => o.DisconnectedCircuitMaxRetained = 16);
        builder.Services.AddScoped<Microsoft.AspNetCore.Components.Authorization.AuthenticationStateProvider, CircuitSessionCheck>();
        builder.Services.AddMudServices();

        var app = builder.Build();
        app.UseSecurityHeaders();
        app.UseStrictTransportSecurity();
        app.UseAuthentication();
        app.UseAuthorization();
        app.UseAntiforgery();
        app.MapStaticAssets().AllowAnonymous();
        app.MapAccountEndpoints();
        app.MapNegotiateSignIn();
        app.MapOidcEndpoints(config);
        if (config.Oidc is not null)
        {
            app.MapBackChannelLogout();
        }
        app.MapRazorComponents<App>().AddInteractiveServerRenderMode(o => o.ContentSecurityFrameAncestorsPolicy = "'none'");
        return app;
    }
}
