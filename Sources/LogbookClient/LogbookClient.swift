import LogbookZMQ
