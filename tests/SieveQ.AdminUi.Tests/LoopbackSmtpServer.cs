using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace SieveQ.AdminUi.Tests;

/// <summary>One mail a <see cref="LoopbackSmtpServer"/> accepted: the envelope, the AUTH PLAIN credentials and the DATA.</summary>
internal sealed record SmtpDelivery(string? Ehlo, string? AuthUser, string? AuthPassword, string MailFrom, IReadOnlyList<string> RcptTo, string Data);

/// <summary>
/// A TcpListener on a free loopback port speaking as much SMTP (RFC 5321) as a client needs to send a mail: EHLO with
/// AUTH PLAIN offered, AUTH PLAIN (with or without an initial response), MAIL, RCPT, DATA with dot-unstuffing, RSET,
/// NOOP, QUIT, and STARTTLS when given a certificate. <see cref="RcptReply"/> lets a test refuse recipients.
/// </summary>
internal sealed class LoopbackSmtpServer : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stopping = new();
    private readonly Task _accepting;

    public ConcurrentQueue<SmtpDelivery> Deliveries { get; } = new();
    public ConcurrentQueue<string> Commands { get; } = new();
    public volatile string RcptReply = "250 2.1.5 ok";

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    private readonly X509Certificate2? _certificate;

    /// <param name="certificate">Offer STARTTLS with this certificate; none: cleartext only.</param>
    public LoopbackSmtpServer(X509Certificate2? certificate = null)
    {
        _certificate = certificate;
        _listener.Start();
        _accepting = AcceptAsync();
    }

    private async Task AcceptAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            TcpClient client;
            try
            {
                client = await _listener.AcceptTcpClientAsync(_stopping.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }
            _ = Task.Run(() => ServeAsync(client));
        }
    }

    private async Task ServeAsync(TcpClient client)
    {
        using var _ = client;
        try
        {
            Stream stream = client.GetStream();
            var reader = new StreamReader(stream, Encoding.UTF8, false, 1024, leaveOpen: true);
            var writer = new StreamWriter(stream, new UTF8Encoding(false), 1024, leaveOpen: true) { NewLine = "\r\n", AutoFlush = true };
            var secured = false;
            await writer.WriteLineAsync("220 loopback ESMTP test server");
            string? ehlo = null, user = null, password = null, from = null;
            var rcpt = new List<string>();
            while (await reader.ReadLineAsync(_stopping.Token) is { } line)
            {
                Commands.Enqueue(line);
                var verb = line.Split(' ', 2)[0].ToUpperInvariant();
                switch (verb)
                {
                    case "EHLO":
                        ehlo = line[5..];
                        await writer.WriteLineAsync("250-loopback greets you");
                        if (_certificate is not null && !secured)
                        {
                            await writer.WriteLineAsync("250-STARTTLS");
                        }
                        await writer.WriteLineAsync("250-AUTH PLAIN");
                        await writer.WriteLineAsync("250 SIZE 1000000");
                        break;
                    case "STARTTLS" when _certificate is not null && !secured:
                        await writer.WriteLineAsync("220 2.0.0 ready to start TLS");
                        var tls = new SslStream(stream);
                        await tls.AuthenticateAsServerAsync(_certificate);
                        (stream, secured, ehlo) = (tls, true, null);
                        Commands.Enqueue("(TLS " + tls.SslProtocol + ")");
                        reader = new StreamReader(stream, Encoding.UTF8, false, 1024, leaveOpen: true);
                        writer = new StreamWriter(stream, new UTF8Encoding(false), 1024, leaveOpen: true) { NewLine = "\r\n", AutoFlush = true };
                        break;
                    case "AUTH":
                        var parts = line.Split(' ');
                        var initial = parts.Length > 2 ? parts[2] : null;
                        if (initial is null)
                        {
                            await writer.WriteLineAsync("334 ");
                            initial = await reader.ReadLineAsync(_stopping.Token);
                        }
                        var fields = Encoding.UTF8.GetString(Convert.FromBase64String(initial!)).Split('\0');
                        (user, password) = (fields[1], fields[2]);
                        await writer.WriteLineAsync("235 2.7.0 authenticated");
                        break;
                    case "MAIL":
                        from = line[10..];
                        rcpt.Clear();
                        await writer.WriteLineAsync("250 2.1.0 ok");
                        break;
                    case "RCPT":
                        var reply = RcptReply;
                        if (reply.StartsWith('2'))
                        {
                            rcpt.Add(line[8..]);
                        }
                        await writer.WriteLineAsync(reply);
                        break;
                    case "DATA":
                        await writer.WriteLineAsync("354 end with <CRLF>.<CRLF>");
                        var data = new StringBuilder();
                        while (await reader.ReadLineAsync(_stopping.Token) is { } d && d != ".")
                        {
                            data.Append(d.StartsWith("..", StringComparison.Ordinal) ? d[1..] : d).Append("\r\n");
                        }
                        Deliveries.Enqueue(new SmtpDelivery(ehlo, user, password, from!, [.. rcpt], data.ToString()));
                        await writer.WriteLineAsync("250 2.0.0 queued");
                        break;
                    case "QUIT":
                        await writer.WriteLineAsync("221 2.0.0 bye");
                        return;
                    case "RSET" or "NOOP":
                        await writer.WriteLineAsync("250 2.0.0 ok");
                        break;
                    default:
                        await writer.WriteLineAsync("502 5.5.2 not implemented");
                        break;
                }
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or ObjectDisposedException or System.Security.Authentication.AuthenticationException)
        {
            // The client went away or the test ended.
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync();
        _listener.Stop();
        await _accepting;
        _stopping.Dispose();
    }
}
