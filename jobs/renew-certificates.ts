/** Renews the deployed apps' certificates that are due, then reloads nginx once; see plugins/deploy/domain/acme/renewal.ts. */
import { appDomains, renewCertificates } from '../plugins/deploy/domain/acme/renewal.ts';
import { done, jobData, post, withDatabase } from '../lib/worker.ts';

const { config } = jobData();
const apps = await withDatabase(appDomains);
post(await renewCertificates(config, apps));
done();
