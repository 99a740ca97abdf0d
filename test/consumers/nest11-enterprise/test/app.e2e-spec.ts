import { describeCrmApp } from './crm.suite';

describeCrmApp('express');
