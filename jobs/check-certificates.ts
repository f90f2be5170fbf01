/** Posts the certificates that expire within 14 days; see plugins/deploy/domain/notifications/certificate-expiry.ts. */
import { done, jobData, post } from '../lib/worker.ts';
import { expiringCertificates } from '../plugins/deploy/domain/notifications/certificate-expiry.ts';

const { config } = jobData();
post({ expiring: expiringCertificates(config.apps.certificatesDir) });
done();
