using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// Makes the channels console.json's <c>alarmDelivery</c> names, reading their secret files now, at start: a missing
/// or unsafe secret stops the console with a clear error instead of failing each notice later, unseen.
/// </summary>
public static class AlarmDeliverySetup
{
    /// <exception cref="DeploymentException">A secret file is missing, empty, readable by others or too short.</exception>
    public static IReadOnlyList<IAlarmChannel> Channels(AlarmDeliveryConfig? config, DeploymentConfig deployment, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        if (config is null)
        {
            return [];
        }
        var channels = new List<IAlarmChannel>();
        foreach (var w in config.Webhooks)
        {
            var path = deployment.Resolve(w.SecretFile);
            var secret = SecretFile.Read(path, $"alarmDelivery: webhook '{w.Name}': secret file");
            if (secret.Length < AlarmWebhookConfig.MinSecretLength)
            {
                throw new DeploymentException($"alarmDelivery: webhook '{w.Name}': secret file {path} holds fewer than {AlarmWebhookConfig.MinSecretLength} characters");
            }
            channels.Add(new AlarmWebhookChannel(w, secret, time));
        }
        if (config.Mail is { } mail)
        {
            var password = mail.PasswordFile is { } file ? SecretFile.Read(deployment.Resolve(file), "alarmDelivery: mail: password file") : null;
            channels.Add(new AlarmMailChannel(mail, password));
        }
        return channels;
    }
}
