import { describeCrmApp } from './crm.suite';

describeCrmApp('fastify');
