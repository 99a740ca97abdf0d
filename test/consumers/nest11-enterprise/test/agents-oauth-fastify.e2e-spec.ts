import { describeAgentsOAuth } from './agents-oauth.suite';

describeAgentsOAuth('fastify');
