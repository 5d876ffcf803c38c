module benchserve

go 1.26.8
